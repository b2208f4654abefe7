// One node of the real-Kafka test bed: a broker+controller JVM that can be killed, frozen, thawed
// and started again on the same ports and data. The JVM runs under `setpriv --pdeathsig KILL`
// (util-linux, on every Debian), so the kernel kills it when the test process dies, however it
// dies: no broker outlives the test that started it, with no wrapper process in between (the pid
// we hold is the JVM's own, so SIGKILL/SIGSTOP reach the broker itself).
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, existsSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";

const SETPRIV = "setpriv";
const LOG_TAIL_CHARS = 3000;

export interface NodeSpec {
  readonly id: number;
  /** The node's own folder: server.properties, its logs and (below it) its data. */
  readonly dir: string;
  readonly propertiesPath: string;
  /** Everything java takes before the main class (see real-kafka-config.ts). */
  readonly jvmArgs: readonly string[];
  /** host:port of its PLAINTEXT listener. */
  readonly plaintext: string;
}

export class KafkaNode {
  readonly spec: NodeSpec;
  #child: ChildProcess | undefined;
  #exited: Promise<void> = Promise.resolve();
  #frozen = false;

  constructor(spec: NodeSpec) {
    this.spec = spec;
  }

  get id(): number {
    return this.spec.id;
  }

  /** The JVM's pid while it runs. */
  get pid(): number | undefined {
    return this.running ? this.#child?.pid : undefined;
  }

  get running(): boolean {
    const child = this.#child;
    return child !== undefined && child.exitCode === null && child.signalCode === null;
  }

  /** Running and not SIGSTOPped: it can answer requests. */
  get answering(): boolean {
    return this.running && !this.#frozen;
  }

  /** Starts the JVM (again); its output goes to stdout.log, log4j's to server.log. */
  start(): void {
    if (this.running) throw new Error(`broker ${this.id} is already running`);
    const out = openSync(join(this.spec.dir, "stdout.log"), "a");
    try {
      const args = ["--pdeathsig", "KILL", "--", "java", ...this.spec.jvmArgs];
      const child = spawn(SETPRIV, [...args, "kafka.Kafka", this.spec.propertiesPath], {
        stdio: ["ignore", out, out],
      });
      this.#child = child;
      this.#frozen = false;
      this.#exited = new Promise((resolve) => {
        child.once("exit", () => resolve());
        child.once("error", () => resolve());
      });
    } finally {
      closeSync(out);
    }
  }

  /** SIGKILL, as a crash or an OOM killer would; resolves once the process is gone. */
  async kill(): Promise<void> {
    if (this.running) this.#child?.kill("SIGKILL");
    await this.#exited;
    this.#frozen = false;
  }

  freeze(): void {
    this.#signal("SIGSTOP");
    this.#frozen = true;
  }

  thaw(): void {
    this.#signal("SIGCONT");
    this.#frozen = false;
  }

  /** The end of its logs, for an error message. */
  logTail(): string {
    const tail = (name: string): string => {
      const path = join(this.spec.dir, name);
      return existsSync(path) ? readFileSync(path, "utf8").slice(-LOG_TAIL_CHARS).trim() : "";
    };
    const parts = [
      ["stdout.log", tail("stdout.log")],
      ["server.log", tail("server.log")],
    ].filter(([, text]) => text);
    return parts.map(([name, text]) => `--- broker ${this.id} ${name}:\n${text}`).join("\n");
  }

  #signal(signal: NodeJS.Signals): void {
    if (!this.running) throw new Error(`broker ${this.id} is not running`);
    this.#child?.kill(signal);
  }
}

/** A cluster id as kafka-storage random-uuid makes one: 16 random bytes, base64url. */
export function newClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString("base64url");
    // Kafka's own generator skips ids starting with "-": the storage tool would read one as an option.
    if (!id.startsWith("-")) return id;
  }
}

export interface FormatOptions {
  readonly jvmArgs: readonly string[];
  readonly propertiesPath: string;
  readonly clusterId: string;
  /** StorageTool's -S values, e.g. `SCRAM-SHA-512=[name=u,password=p]`. */
  readonly scramCredentials: readonly string[];
}

/**
 * `kafka-storage format`: writes meta.properties and the bootstrap metadata (with the SCRAM
 * users) into the node's log dir. Static voters: neither --standalone nor --initial-controllers.
 */
export function formatStorage(opts: FormatOptions): Promise<void> {
  const args = [...opts.jvmArgs, "kafka.tools.StorageTool", "format", "-t", opts.clusterId];
  args.push("-c", opts.propertiesPath, ...opts.scramCredentials.flatMap((c) => ["-S", c]));
  return new Promise((resolve, reject) => {
    execFile("java", args, { timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`kafka-storage format failed: ${error.message}\n${stdout}${stderr}`));
      else resolve();
    });
  });
}
