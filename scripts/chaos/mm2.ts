/**
 * MirrorMaker 2 as the chaos run's replicator (`npm run chaos -- --kafka real --replicator mm2`):
 * one dedicated MM2 node as test/helpers/mirror-maker2.ts runs it (exactly-once source support,
 * identity replication policy, read_committed source consumer), under the faults kafka-mirror's
 * workers get: its JVM SIGKILLed and started again (it resumes from the offsets it committed in
 * Kafka), or SIGSTOPped and SIGCONTed, some freezes longer than its producer's
 * transaction.timeout.ms. Then, as there is no checkpoint of ours to wait for, the run waits
 * until every source record has a copy on the target, or the target stopped growing.
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { MirrorRecord } from "../../lib/core/model.js";
import {
  type LaunchedMirrorMaker2,
  launchMirrorMaker2,
  type MirrorMaker2Options,
} from "../../test/helpers/mirror-maker2.js";
import { readConnectStatus, sourceTasksState } from "../../test/helpers/mirror-maker2-status.js";
import { ClusterView, recordImage } from "../../test/helpers/partition-data.js";
import type { Bootstrap } from "./compare.js";
import { between, type FaultContext, instants, type Random, sleep } from "./faults.js";
import type { Mm2ChaosOptions } from "./options.js";

/** The source alias MM2 runs with: its status topic on the target is named after it. */
const SOURCE_ALIAS = "source";

/** MM2's counts beyond the shared ones. */
export interface Mm2Counts {
  /** MM2 JVM starts (the first included). */
  mm2_starts: number;
  /** Times the MM2 JVM exited on its own (then it was started again, as a supervisor would). */
  mm2_exits: number;
  /** Freezes longer than MM2's producer transaction.timeout.ms (Kafka's default 60 s). */
  freezes_past_txn_timeout: number;
  /** What Connect's status topic said of the connector and its tasks at the end. */
  mm2_tasks: string;
}

/** How often the node checks that its JVM still runs. */
const WATCH_MS = 2_000;

/**
 * One MM2 node at a time: SIGKILLed and started anew, or frozen and thawed; its logs kept. A JVM
 * that exits on its own is started again (counted), as systemd's Restart=always would.
 */
export class Mm2Node {
  #current: LaunchedMirrorMaker2 | undefined;
  #starts = 0;
  #busy: Promise<void> = Promise.resolve();
  #watch: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: MirrorMaker2Options,
    private readonly logDir: string,
    private readonly counts: Mm2Counts,
    private readonly log: (line: string) => void,
  ) {}

  /** Starts MM2 and resolves once its source tasks run; from then on, watches the JVM. */
  async start(): Promise<void> {
    const mm2 = await this.#launch(true);
    await mm2.ready;
    this.log(`MirrorMaker 2 copying ${mm2.startMs} ms after its start`);
    this.#watch = setInterval(() => {
      if (this.#current !== undefined && this.#current.pid === undefined) {
        this.#exclusive(async () => {
          if (this.#current === undefined || this.#current.pid !== undefined) return;
          this.counts.mm2_exits++;
          this.log("MirrorMaker 2 exited on its own: starting it again");
          await this.#retire();
          await this.#launch(false);
        });
      }
    }, WATCH_MS);
  }

  /**
   * SIGKILL, as a crash, and a new JVM at once. Its readiness is not awaited: Connect's status
   * topic still holds the killed node's task states, so there is nothing honest to wait for.
   */
  killAndRestart(): Promise<void> {
    return this.#exclusive(async () => {
      const pid = this.#current?.pid;
      if (pid !== undefined) process.kill(pid, "SIGKILL");
      await this.#retire();
      await this.#launch(false);
    });
  }

  freeze(): void {
    this.#signal("SIGSTOP");
  }

  thaw(): void {
    this.#signal("SIGCONT");
  }

  /** SIGTERM (MM2 aborts what it has open), keeping its logs. */
  stop(): Promise<void> {
    clearInterval(this.#watch);
    return this.#exclusive(async () => {
      this.#signal("SIGCONT");
      await this.#retire("stop");
    });
  }

  /** One start or end at a time: the watchdog must not restart a JVM a kill is replacing. */
  #exclusive(work: () => Promise<void>): Promise<void> {
    const next = this.#busy.then(work);
    this.#busy = next.catch((error: unknown) => this.log(`MirrorMaker 2: ${String(error).split("\n")[0]}`));
    return next;
  }

  async #launch(awaitTasks: boolean): Promise<LaunchedMirrorMaker2> {
    const mm2 = await launchMirrorMaker2({ ...this.options, sourceAlias: SOURCE_ALIAS, awaitTasks });
    // A start whose tasks fail shows in its log and in the final task states.
    mm2.ready.catch(() => undefined);
    this.#current = mm2;
    this.#starts++;
    this.counts.mm2_starts++;
    this.log(`MirrorMaker 2 start ${this.#starts}: pid ${mm2.pid}`);
    return mm2;
  }

  /** Copies the node's logs into the run's log folder, then ends it (its folder goes with it). */
  async #retire(how: "kill" | "stop" = "kill"): Promise<void> {
    const mm2 = this.#current;
    if (mm2 === undefined) return;
    this.#current = undefined;
    for (const name of ["mirror-maker.log", "stdout.log"]) {
      const path = join(mm2.dir, name);
      if (existsSync(path))
        appendFileSync(join(this.logDir, `mm2-${this.#starts}-${name}`), readFileSync(path));
    }
    await (how === "kill" ? mm2.kill() : mm2.stop());
  }

  #signal(signal: NodeJS.Signals): void {
    const pid = this.#current?.pid;
    if (pid !== undefined) process.kill(pid, signal);
  }
}

/**
 * MM2's "worker" faults: `kills` SIGKILLs (each followed by a new start), `freezes` short and
 * `longFreezes` long freezes, in random order at random instants of the fault phase, each at
 * least `minUpMs` after the previous one ended. One node, so no other node takes over during a
 * freeze: what a freeze tests is MM2 waking up with a transaction the coordinator may have
 * aborted meanwhile (a long one outlasts the producer's transaction.timeout.ms).
 */
export async function mm2Faults(
  ctx: FaultContext,
  random: Random,
  node: Mm2Node,
  options: Mm2ChaosOptions,
  counts: Mm2Counts,
): Promise<void> {
  const kinds: ("kill" | "freeze" | "long")[] = [
    ...Array<"kill">(options.kills).fill("kill"),
    ...Array<"freeze">(options.freezes).fill("freeze"),
    ...Array<"long">(options.longFreezes).fill("long"),
  ];
  // Fisher-Yates on the loop's own stream: the order is part of the seed's replay.
  for (let i = kinds.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [kinds[i], kinds[j]] = [kinds[j] ?? "kill", kinds[i] ?? "kill"];
  }
  const startedAt = Date.now();
  let endedAt = startedAt;
  const at = instants(random, kinds.length, ctx.faultPhaseMs);
  for (const [i, kind] of kinds.entries()) {
    await sleep(Math.max(startedAt + (at[i] ?? 0), endedAt + options.minUpMs) - Date.now());
    if (kind === "kill") {
      await node.killAndRestart();
      ctx.counts.kills++;
      ctx.log("MirrorMaker 2: SIGKILL, started again");
    } else {
      const pauseMs = between(random, kind === "long" ? options.longFreezeMs : options.freezeMs);
      node.freeze();
      ctx.counts.freezes++;
      if (kind === "long") counts.freezes_past_txn_timeout++;
      ctx.log(`MirrorMaker 2: frozen for ${pauseMs} ms`);
      await sleep(pauseMs);
      node.thaw();
      ctx.log("MirrorMaker 2: thawed");
    }
    endedAt = Date.now();
  }
}

/**
 * Waits until every source record has a copy on the target (read_committed, matched by content),
 * or the target has not grown for `stallMs`, or `timeoutMs` passed. A read can fail while MM2
 * holds a transaction open; that poll just counts as "not yet".
 */
export async function waitForMm2CatchUp(
  src: Bootstrap,
  dst: Bootstrap,
  partitionsOf: { topics: readonly string[]; partitions: number },
  limits: { timeoutMs: number; stallMs: number },
  log: (line: string) => void,
): Promise<void> {
  const s = new ClusterView(src.bootstrapServers, "chaos-mm2-wait");
  const t = new ClusterView(dst.bootstrapServers, "chaos-mm2-wait");
  const deadline = Date.now() + limits.timeoutMs;
  try {
    const tps = partitionsOf.topics.flatMap((topic) =>
      Array.from({ length: partitionsOf.partitions }, (_, partition) => ({ topic, partition })),
    );
    const sources = await Promise.all(tps.map((tp) => s.read(tp)));
    let seen = -1;
    let grewAt = Date.now();
    for (;;) {
      try {
        const targets = await Promise.all(tps.map((tp) => t.read(tp)));
        const missing = sources.reduce((n, source, i) => n + uncopied(source, targets[i] ?? []), 0);
        if (missing === 0) return;
        const size = targets.reduce((n, records) => n + records.length, 0);
        if (size !== seen) {
          seen = size;
          grewAt = Date.now();
        }
        if (Date.now() - grewAt > limits.stallMs) {
          log(
            `MirrorMaker 2 stopped copying: ${missing} source records without a copy, target still at ${size}`,
          );
          return;
        }
      } catch (error) {
        log(`MirrorMaker 2 catch-up check failed, retrying: ${String(error).split("\n")[0]}`);
      }
      if (Date.now() > deadline) {
        log("MirrorMaker 2 catch-up timed out");
        return;
      }
      await sleep(5_000);
    }
  } finally {
    await Promise.allSettled([s.close(), t.close()]);
  }
}

/** Source records with no copy of the same content on the target (each copy used once). */
function uncopied(source: readonly MirrorRecord[], target: readonly MirrorRecord[]): number {
  const copies = new Map<string, number>();
  for (const r of target) copies.set(recordImage(r), (copies.get(recordImage(r)) ?? 0) + 1);
  let missing = 0;
  for (const r of source) {
    const image = recordImage(r);
    const left = copies.get(image) ?? 0;
    if (left === 0) missing++;
    else copies.set(image, left - 1);
  }
  return missing;
}

/** Connect's view of the MirrorSourceConnector and its tasks, e.g. "connector RUNNING, ...-0 FAILED". */
export async function mm2TaskStates(dst: Bootstrap): Promise<string> {
  const view = new ClusterView(dst.bootstrapServers, "chaos-mm2-status");
  try {
    const state = sourceTasksState(await readConnectStatus(view, `mm2-status.${SOURCE_ALIAS}.internal`));
    return state.failed ?? state.summary;
  } catch (error) {
    return `unknown (${String(error).split("\n")[0]})`;
  } finally {
    await view.close();
  }
}
