// MirrorMaker 2 beside kafka-mirror: one dedicated MM2 node (`org.apache.kafka.connect.mirror.
// MirrorMaker mm2.properties --clusters <target>`, the jars scripts/testbed/fetch-kafka.sh puts in
// .testbed/kafka/mm2-libs, the same Kafka release as the brokers) copying one flow between two
// clusters, for the bench (`npm run bench -- --kafka real`) and for tests and harnesses that want
// MM2's behaviour next to ours.
//
// Usage:
//   const mm2 = await startMirrorMaker2({ source, target, topics: "orders|payments" });
//   ... // records produced to the source appear on the target under the same names
//   await mm2.stop();
//
// Options (MirrorMaker2Options): `source`/`target` are RealKafka clusters or anything with
// `bootstrapServers` and `brokerIds` (the broker count sizes every replication factor MM2 uses);
// `topics` a Java regex over whole source topic names; `tasks` the MirrorSourceConnector's
// tasks.max (default 1); `exactlyOnce` (default true) Kafka's exactly-once source support;
// `properties` extra mm2.properties entries, applied last (e.g. `refresh.topics.interval.seconds`
// to see topics created after the start sooner than MM2's 10 minutes, or
// `source->target.producer.linger.ms`); `quickJit` for functional runs, off for measurements.
// What mm2.properties holds and why: mirror-maker2-config.ts.
//
// startMirrorMaker2 resolves once the MirrorSourceConnector and at least one of its tasks are RUNNING in
// Connect's status topic on the target (`mm2-status.<source alias>.internal`): the flow is set up
// and its tasks have their consumers. MM2 makes no task without a partition to copy, so at least
// one matching source topic must exist before the start. It fails early, with the end of MM2's
// log, when the JVM exits or a task FAILED. launchMirrorMaker2 returns at spawn instead, with a
// `ready` promise for the same moment, for a caller that watches the JVM from its first instant.
//
// Lifetime: the JVM runs under `setpriv --pdeathsig KILL` (as the brokers, real-kafka-node.ts),
// so the kernel kills it when the process that started it dies, however it dies. stop() is a
// SIGTERM (MM2's shutdown hook stops connectors and tasks; an open transaction is aborted) with
// a SIGKILL after `stopTimeoutMs`; kill() is a SIGKILL, as a crash. Either leaves MM2's state in
// Kafka (its Connect topics on the target, offset syncs on the source): a new start with the same
// aliases resumes from the offsets MM2 committed there. Local files (mm2.properties,
// mirror-maker.log, stdout.log) live in `dir`, removed by stop() and kill().
import { type ChildProcess, spawn } from "node:child_process";
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Mm2Cluster, mirrorMaker2JvmArguments, mirrorMaker2Properties } from "./mirror-maker2-config.js";
import { readConnectStatus, type SourceTasksState, sourceTasksState } from "./mirror-maker2-status.js";
import { freePort } from "./net.js";
import { ClusterView } from "./partition-data.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** MirrorMaker 2's classpath folder; KAFKA_MIRROR_MM2_LIBS points at another fetch of it. */
export const MM2_LIBS = process.env.KAFKA_MIRROR_MM2_LIBS || join(ROOT, ".testbed", "kafka", "mm2-libs");
const MM2_LOG4J = join(ROOT, "testbed", "kafka", "mm2-log4j2.properties");
const MAIN_CLASS = "org.apache.kafka.connect.mirror.MirrorMaker";
const LOG_TAIL_CHARS = 4000;
const POLL_MS = 250;

export interface MirrorMaker2Options {
  readonly source: Mm2Cluster;
  readonly target: Mm2Cluster;
  /** Java regex over whole source topic names. */
  readonly topics: string;
  /** @default 1 */
  readonly tasks?: number;
  /** `<target>.exactly.once.source.support`: enabled, or disabled. @default true */
  readonly exactlyOnce?: boolean;
  /** @default "source" */
  readonly sourceAlias?: string;
  /** @default "target" */
  readonly targetAlias?: string;
  /** Extra mm2.properties entries, applied last. */
  readonly properties?: Readonly<Record<string, string>>;
  /** -XX:TieredStopAtLevel=1: quicker start, slower copy. Off for benchmarks. @default true */
  readonly quickJit?: boolean;
  /** -Xmx; the distribution's connect-mirror-maker.sh uses 2G. @default "2g" */
  readonly heap?: string;
  /** @default 180000 */
  readonly startTimeoutMs?: number;
  /** How long stop() waits after SIGTERM before a SIGKILL. @default 30000 */
  readonly stopTimeoutMs?: number;
}

export interface MirrorMaker2 {
  /** The JVM's pid while it runs (for /proc: CPU time, memory). */
  readonly pid: number | undefined;
  /** mm2.properties, mirror-maker.log and stdout.log; gone after stop() or kill(). */
  readonly dir: string;
  /** From spawning the JVM to the flow's tasks RUNNING. */
  readonly startMs: number;
  /** SIGTERM, then SIGKILL after stopTimeoutMs; removes dir. Idempotent. */
  stop(): Promise<void>;
  /** SIGKILL; removes dir. Idempotent. */
  kill(): Promise<void>;
  /** The end of MM2's logs, for an error message. */
  logTail(): string;
}

class MirrorMaker2Process implements MirrorMaker2 {
  readonly dir: string;
  startMs = 0;
  readonly #child: ChildProcess;
  readonly #exited: Promise<void>;
  readonly #stopTimeoutMs: number;
  #ending: Promise<void> | undefined;

  constructor(dir: string, child: ChildProcess, stopTimeoutMs: number) {
    this.dir = dir;
    this.#child = child;
    this.#stopTimeoutMs = stopTimeoutMs;
    this.#exited = new Promise((resolve) => {
      child.once("exit", () => resolve());
      child.once("error", () => resolve());
    });
  }

  get running(): boolean {
    return this.#child.exitCode === null && this.#child.signalCode === null;
  }

  get pid(): number | undefined {
    return this.running ? this.#child.pid : undefined;
  }

  stop(): Promise<void> {
    this.#ending ??= this.#end("SIGTERM");
    return this.#ending;
  }

  kill(): Promise<void> {
    this.#ending ??= this.#end("SIGKILL");
    return this.#ending;
  }

  logTail(): string {
    const tail = (name: string): string => {
      const path = join(this.dir, name);
      return existsSync(path) ? readFileSync(path, "utf8").slice(-LOG_TAIL_CHARS).trim() : "";
    };
    return ["stdout.log", "mirror-maker.log"]
      .map((name) => [name, tail(name)])
      .filter(([, text]) => text)
      .map(([name, text]) => `--- MirrorMaker 2 ${name}:\n${text}`)
      .join("\n");
  }

  async #end(signal: NodeJS.Signals): Promise<void> {
    if (this.running) this.#child.kill(signal);
    if (signal !== "SIGKILL") {
      const timer = setTimeout(() => {
        if (this.running) this.#child.kill("SIGKILL");
      }, this.#stopTimeoutMs);
      await this.#exited;
      clearTimeout(timer);
    }
    await this.#exited;
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Starts one dedicated MM2 node and resolves once its flow's tasks run (see the header). */
export async function startMirrorMaker2(opts: MirrorMaker2Options): Promise<MirrorMaker2> {
  const mm2 = await launchMirrorMaker2(opts);
  await mm2.ready;
  return mm2;
}

export interface LaunchedMirrorMaker2 extends MirrorMaker2 {
  /** Resolves as startMirrorMaker2 does; rejects, with MM2's logs, after killing it. */
  readonly ready: Promise<void>;
}

/**
 * Spawns MM2 and returns at once, its pid known, for a caller that watches the JVM from its first
 * instant (the bench reads its CPU time from /proc); `ready` then says when the flow runs.
 */
export async function launchMirrorMaker2(opts: MirrorMaker2Options): Promise<LaunchedMirrorMaker2> {
  requireMm2Jars();
  const sourceAlias = opts.sourceAlias ?? "source";
  const targetAlias = opts.targetAlias ?? "target";
  checkOptions(opts, sourceAlias, targetAlias);
  const dir = mkdtempSync(join(tmpdir(), "kafka-mirror-mm2-"));
  const propertiesPath = join(dir, "mm2.properties");
  writeFileSync(
    propertiesPath,
    mirrorMaker2Properties({
      source: opts.source,
      target: opts.target,
      sourceAlias,
      targetAlias,
      topics: opts.topics,
      tasks: opts.tasks ?? 1,
      exactlyOnce: opts.exactlyOnce ?? true,
      restPort: await freePort(),
      extra: opts.properties ?? {},
    }),
  );
  const jvmArgs = mirrorMaker2JvmArguments({
    heap: opts.heap ?? "2g",
    quickJit: opts.quickJit ?? true,
    logsDir: dir,
    log4jConfig: MM2_LOG4J,
    classpath: join(MM2_LIBS, "*"),
  });
  const out = openSync(join(dir, "stdout.log"), "a");
  let mm2: MirrorMaker2Process;
  try {
    const args = ["--pdeathsig", "KILL", "--", "java", ...jvmArgs, MAIN_CLASS, propertiesPath];
    const child = spawn("setpriv", [...args, "--clusters", targetAlias], { stdio: ["ignore", out, out] });
    mm2 = new MirrorMaker2Process(dir, child, opts.stopTimeoutMs ?? 30_000);
  } finally {
    closeSync(out);
  }
  const started = performance.now();
  const ready = waitUntilCopying(mm2, opts.target, sourceAlias, opts.startTimeoutMs ?? 180_000).then(
    () => {
      mm2.startMs = Math.round(performance.now() - started);
    },
    async (error: unknown) => {
      const logs = mm2.logTail();
      await mm2.kill();
      throw new Error(`${error instanceof Error ? error.message : String(error)}\n${logs}`);
    },
  );
  // A caller that stops MM2 before it is ready still gets the rejection through `ready`.
  ready.catch(() => undefined);
  return Object.assign(mm2, { ready });
}

async function waitUntilCopying(
  mm2: MirrorMaker2Process,
  target: Mm2Cluster,
  sourceAlias: string,
  timeoutMs: number,
): Promise<void> {
  const statusTopic = `mm2-status.${sourceAlias}.internal`;
  const view = new ClusterView(target.bootstrapServers, "mm2-status-watch");
  const deadline = Date.now() + timeoutMs;
  let last = "no status yet";
  try {
    for (;;) {
      if (!mm2.running) throw new Error("MirrorMaker 2 exited while starting");
      let state: SourceTasksState | undefined;
      try {
        state = sourceTasksState(await readConnectStatus(view, statusTopic));
      } catch (error) {
        // The status topic appears only once the herder is up; until then there is nothing to read.
        last = error instanceof Error ? error.message : String(error);
      }
      if (state?.failed) throw new Error(`MirrorMaker 2: ${state.failed}`);
      if (state?.running) return;
      if (state) last = state.summary;
      if (Date.now() > deadline) {
        throw new Error(`MirrorMaker 2 did not start its source tasks within ${timeoutMs} ms (${last})`);
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  } finally {
    await view.close();
  }
}

function requireMm2Jars(): void {
  const present = existsSync(MM2_LIBS) && readdirSync(MM2_LIBS).some((f) => /^connect-mirror-\d/.test(f));
  if (!present) {
    throw new Error(`${MM2_LIBS} has no MirrorMaker 2 jars: run \`npm run setup:testbed\` to fetch them`);
  }
}

function checkOptions(opts: MirrorMaker2Options, sourceAlias: string, targetAlias: string): void {
  const problems: string[] = [];
  const tasks = opts.tasks ?? 1;
  if (!Number.isInteger(tasks) || tasks < 1) problems.push(`tasks must be a positive integer, got ${tasks}`);
  if (opts.topics.trim() === "") problems.push("topics must be a regular expression, got an empty one");
  for (const alias of [sourceAlias, targetAlias]) {
    // Aliases become property prefixes, topic names and URL path parts.
    if (!/^[A-Za-z0-9_-]+$/.test(alias))
      problems.push(`cluster alias ${JSON.stringify(alias)}: use [A-Za-z0-9_-]`);
  }
  if (sourceAlias === targetAlias) problems.push("source and target aliases must differ");
  for (const [name, cluster] of [
    ["source", opts.source],
    ["target", opts.target],
  ] as const) {
    if (cluster.bootstrapServers.length === 0) problems.push(`${name} has no bootstrap servers`);
    if (cluster.brokerIds.length === 0) problems.push(`${name} has no brokers`);
  }
  if (problems.length > 0) throw new Error(`startMirrorMaker2: ${problems.join("; ")}`);
}
