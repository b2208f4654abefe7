/**
 * The chaos run's worker processes (scripts/chaos/worker.ts): a new one starts whenever one exits,
 * until stop(). Each writes its lease and error log to its own file in the run's log folder.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { MirrorConfigInput } from "../../lib/config/schema.js";
import { between, type Random, type Range, stream } from "./faults.js";

const WORKER_SCRIPT = fileURLToPath(new URL("./worker.ts", import.meta.url));

export interface PoolOptions {
  readonly seed: number;
  /** Random budget of one worker process. */
  readonly budgetMs: Range;
  /** Probability that a worker SIGKILLs itself right after a write was acknowledged. */
  readonly dieAfterAck: number;
  /** ChaosOptions.dieAtAck */
  readonly dieAtAck?: number;
}

/** What the pool counts from its workers' exits and output. */
export interface PoolCounts {
  kills_after_ack: number;
  fenced_writes: number;
  retention_losses: number;
  recoveries: number;
  worker_runs: number;
}

/** Worker processes: a new one starts whenever one exits, until stop(). */
export class WorkerPool {
  readonly killedByUs = new WeakSet<ChildProcess>();
  private readonly children = new Set<ChildProcess>();
  private readonly errors = new Map<string, number>();
  /** Workers asked to freeze themselves mid-write, and who waits for them to do it. */
  private readonly freezing = new Map<ChildProcess, (frozen: boolean) => void>();
  /** When each worker last started a write. */
  private readonly wroteAt = new WeakMap<ChildProcess, number>();
  private readonly random: Random;
  private stopping = false;
  private seq = 0;

  constructor(
    private readonly endpoints: { dynamodb: string; dynamodbTimeoutMs: number },
    private readonly config: MirrorConfigInput,
    private readonly o: PoolOptions,
    private readonly result: PoolCounts,
    private readonly logDir: string,
    private readonly log: (line: string) => void,
  ) {
    this.random = stream(o.seed, 0);
  }

  alive(): ChildProcess[] {
    return [...this.children].filter((c) => c.exitCode === null && c.signalCode === null);
  }

  /** When `child` last started a write (0: never). */
  lastWriteAt(child: ChildProcess): number {
    return this.wroteAt.get(child) ?? 0;
  }

  spawn(): void {
    if (this.stopping) return;
    const id = `w${++this.seq}`;
    const child = spawn(process.execPath, ["--import", "tsx", WORKER_SCRIPT], {
      env: {
        ...process.env,
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
        CHAOS_CONFIG: JSON.stringify(this.config),
        CHAOS_DYNAMODB: this.endpoints.dynamodb,
        CHAOS_DYNAMODB_TIMEOUT_MS: String(this.endpoints.dynamodbTimeoutMs),
        CHAOS_BUDGET_MS: String(between(this.random, this.o.budgetMs)),
        CHAOS_WORKER_ID: id,
        CHAOS_DIE_AFTER_ACK: String(this.o.dieAfterAck),
        CHAOS_DIE_AT_ACK: String(this.result.kills_after_ack === 0 ? (this.o.dieAtAck ?? 0) : 0),
        CHAOS_LOG_FILE: join(this.logDir, `${id}.log`),
      },
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.log(`spawn ${id} pid ${child.pid}`);
    this.result.worker_runs++;
    this.children.add(child);
    this.watch(child, id);
  }

  private watch(child: ChildProcess, id: string): void {
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      for (let nl = out.indexOf("\n"); nl >= 0; nl = out.indexOf("\n")) {
        const line = out.slice(0, nl);
        out = out.slice(nl + 1);
        if (line.includes('"writing"')) this.wroteAt.set(child, Date.now());
        if (line.includes('"recovered"')) this.result.recoveries++;
        if (line.includes('"fenced"')) this.result.fenced_writes++;
        if (line.includes('"frozen"')) this.settleFreeze(child, true);
        if (line.includes('"lost"')) {
          this.result.retention_losses++;
          this.log(`retention loss reported: ${line}`);
        }
      }
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      for (const line of chunk.toString("utf8").split("\n")) {
        const m = /"message":"([^"]+)"/.exec(line);
        const key = m?.[1] ?? line.slice(0, 120);
        if (key.trim() !== "") this.errors.set(key, (this.errors.get(key) ?? 0) + 1);
      }
    });
    // A stdin write to a worker that just died must not crash the driver.
    child.stdin?.on("error", () => {});
    child.once("exit", (code, signal) => {
      this.children.delete(child);
      this.settleFreeze(child, false);
      if (this.stopping) return;
      const byUs = this.killedByUs.has(child);
      if (signal === "SIGKILL" && !byUs) this.result.kills_after_ack++;
      this.log(`exit ${id} pid ${child.pid}: ${signal ?? code}${byUs ? " (killed by the driver)" : ""}`);
      this.spawn();
    });
  }

  /**
   * Asks `child` to SIGSTOP itself inside its next write (scripts/chaos/worker.ts). True once it
   * said it did, false when it exited or wrote nothing within `withinMs` (then it is disarmed, and
   * should it freeze itself anyway in that race, it is let go at once).
   */
  freezeInWrite(child: ChildProcess, withinMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        child.stdin?.write("disarm\n");
        this.settleFreeze(child, false);
      }, withinMs);
      this.freezing.set(child, (frozen) => {
        clearTimeout(timer);
        resolve(frozen);
      });
      child.stdin?.write("freeze\n");
    });
  }

  private settleFreeze(child: ChildProcess, frozen: boolean): void {
    const settle = this.freezing.get(child);
    this.freezing.delete(child);
    if (settle !== undefined) settle(frozen);
    // A freeze nobody waits for any more (armed, timed out, then reached): undo it, after the
    // stop itself has surely landed (it follows the announcement by microseconds).
    else if (frozen) setTimeout(() => child.kill("SIGCONT"), 200);
  }

  /** SIGKILLs every worker (a frozen one too) and waits for them to exit. */
  async stop(): Promise<void> {
    this.stopping = true;
    const exits = [...this.children].map(
      (c) =>
        new Promise<void>((resolve) => (c.exitCode !== null ? resolve() : c.once("exit", () => resolve()))),
    );
    this.killAll();
    await Promise.all(exits);
  }

  killAll(): void {
    this.stopping = true;
    for (const c of this.children) c.kill("SIGKILL");
  }

  logErrors(log: (line: string) => void): void {
    if (this.errors.size === 0) return;
    const top = [...this.errors.entries()].sort((a, b) => b[1] - a[1]).slice(0, 8);
    log(`worker errors logged: ${top.map(([k, n]) => `${n}x ${k}`).join("; ")}`);
  }
}
