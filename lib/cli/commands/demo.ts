/**
 * `kafka-mirror demo`: a newcomer's first run. Starts two local 3-broker Kafka clusters
 * (librdkafka's mock, or with `--kafka real` Apache Kafka brokers, both built by `npm run
 * setup:testbed`) and an embedded lease store in a
 * temporary state directory, writes sample traffic to BI topics like the field notes', runs three
 * workers until every checkpoint reaches the source log end while showing progress and lag, then
 * verifies the copy and prints one summary line. Everything it started is stopped in every case.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type MockKafka, startMockKafka } from "../../../test/helpers/mock-kafka.js";
import { startRealKafka } from "../../../test/helpers/real-kafka.js";
import { type MirrorConfig, parseConfig } from "../../config/schema.js";
import type { ClusterAdmin, ReplicationMetrics } from "../../core/ports.js";
import type { KafkaRetry } from "../../core/retry.js";
import { retryingAdmin, retryingReader } from "../../core/retrying-ports.js";
import { stopLeaseServer } from "../../dynamodb/embedded/ensure.js";
import { createReplicator, topicSelectorOf } from "../../replicator.js";
import { verifyMirror } from "../../verify/verify-mirror.js";
import { clusterSide, leaseStoreFor, type OpenedLeaseStore } from "../../wiring.js";
import { CliError, ExitCode } from "../cli-error.js";
import { CliLogger } from "../cli-logger.js";
import { Closers } from "../closers.js";
import { type CliCommand, commandHelp, defineCommand, usageError } from "../command.js";
import { type CliIo, count, isTerminal, LiveBlock, progressBar, renderTable } from "../console.js";
import { statusRows } from "../status-rows.js";
import { commandRetry, mirrorHeaderOf } from "./context.js";
import { requireTestbed } from "./demo-testbed.js";
import {
  DEMO_PARTITIONS,
  DEMO_RECORDS_PER_PARTITION,
  DEMO_TOPICS,
  DEMO_UNLISTED_TOPIC,
  writeSampleTraffic,
} from "./demo-traffic.js";

const WORKERS = ["demo-worker-1", "demo-worker-2", "demo-worker-3"] as const;
const ROUND_MS = 30_000;
/** The copy takes one round or two; this bound only stops a broken build from looping forever. */
const MAX_ROUNDS = 10;

/** The test bed's two kinds of cluster: librdkafka's mock (starts in a second) or Apache Kafka. */
export const DEMO_KAFKA_KINDS = ["mock", "real"] as const;
export type DemoKafkaKind = (typeof DEMO_KAFKA_KINDS)[number];

export interface DemoOptions {
  readonly debug: boolean;
  readonly signal: AbortSignal;
  /** @default "mock" */
  readonly kafka?: DemoKafkaKind;
}

/** What the demo needs of a cluster; both test-bed launchers give it. */
type DemoCluster = Pick<MockKafka, "bootstrapServers" | "createTopic" | "stop">;

class DemoMetrics implements ReplicationMetrics {
  copied = 0;
  readonly lost: string[] = [];
  batchCopied(event: { records: number }): void {
    this.copied += event.records;
  }
  recordsLost(event: { topic: string; partition: number; from: number; to: number }): void {
    this.lost.push(`${event.topic}/${event.partition}: offsets ${event.from}..${event.to}`);
  }
  partitionError(): void {}
}

type Say = (line: string) => void;
type Replicator = ReturnType<typeof createReplicator>;

/** What the demo started; everything in it is also registered in the demo's closers. */
interface DemoSetup {
  readonly source: DemoCluster;
  readonly target: DemoCluster;
  readonly config: MirrorConfig;
  readonly table: OpenedLeaseStore;
  /** Retried per `retry`, like every Kafka call the demo makes itself (not the workers'). */
  readonly sourceAdmin: ClusterAdmin;
  readonly retry: KafkaRetry;
  readonly workers: readonly Replicator[];
  readonly metrics: DemoMetrics;
  /** Records written to the whitelisted topics. */
  readonly total: number;
}

export async function demoCommand(options: DemoOptions, io: CliIo): Promise<number> {
  requireTestbed();
  const say: Say = (line) => void io.stdout.write(`${line}\n`);
  const logger = new CliLogger(io, { debug: options.debug });
  const closers = new Closers((m) => logger.warn(m));
  // Ctrl-C also reaches the brokers (same process group); their vanishing is not news then.
  options.signal.addEventListener("abort", () => {
    logger.quiet = true;
  });
  const startedAt = Date.now();
  try {
    const setup = await prepareDemo(closers, logger, say, options);
    const replicationStart = Date.now();
    await replicateUntilCaughtUp(setup, closers, io, options.signal);
    const replicationMs = Date.now() - replicationStart;
    if (setup.metrics.lost.length > 0) {
      throw new CliError(
        `the workers reported records lost: ${setup.metrics.lost.join("; ")}`,
        ExitCode.FAILED,
      );
    }
    say("verifying: comparing every whitelisted partition of source and target…");
    const outcome = await verifyDemo(setup, closers, options.signal);
    for (const problem of outcome.problems.slice(0, 5)) io.stderr.write(`MISMATCH ${problem}\n`);
    const detail = outcome.ok
      ? `verify OK: source and target identical record for record, ${DEMO_UNLISTED_TOPIC} not copied`
      : `verify FAILED: ${outcome.problems.length} problem(s), see above`;
    say(
      `kafka-mirror demo: ${count(outcome.verified)} records, ${DEMO_TOPICS.length} topics, ${outcome.partitions} partitions ` +
        `mirrored in ${(replicationMs / 1_000).toFixed(1)} s by ${WORKERS.length} workers; ${detail}; ` +
        `total ${((Date.now() - startedAt) / 1_000).toFixed(1)} s`,
    );
    return outcome.ok ? ExitCode.OK : ExitCode.FAILED;
  } catch (error) {
    if (options.signal.aborted) return ExitCode.INTERRUPTED;
    throw withTestbedHint(error);
  } finally {
    await closers.closeAll();
  }
}

function withTestbedHint(error: unknown): unknown {
  if (!(error instanceof Error) || !/setup:testbed/.test(error.message)) return error;
  return new CliError(
    `${error.message}\nhint: \`npm run demo\` runs \`npm run setup:testbed\` first; run that on its own to see why it failed.`,
    ExitCode.FAILED,
    { cause: error },
  );
}

/** Clusters, sample traffic, the lease table and three workers. */
async function prepareDemo(
  closers: Closers,
  logger: CliLogger,
  say: Say,
  options: DemoOptions,
): Promise<DemoSetup> {
  const { signal } = options;
  const kind = options.kafka ?? "mock";
  const what = kind === "real" ? "Apache Kafka (one JVM per broker, about a minute)" : "mock Kafka";
  say(`kafka-mirror demo: starting two 3-broker ${what} clusters and an embedded lease store…`);
  const stateDir = await mkdtemp(join(tmpdir(), "kafka-mirror-demo-"));
  closers.add("state directory", () => rm(stateDir, { recursive: true, force: true }));
  closers.add("embedded lease server", async () => {
    await stopLeaseServer(stateDir);
  });
  const [source, target] = await startClusters(closers, kind);
  signal.throwIfAborted();

  const all = [...DEMO_TOPICS, DEMO_UNLISTED_TOPIC];
  for (const topic of all) await source.createTopic(topic, DEMO_PARTITIONS);
  say(
    `writing ${count(DEMO_PARTITIONS * DEMO_RECORDS_PER_PARTITION)} records to each of ${all.join(", ")} ` +
      `(${DEMO_PARTITIONS} partitions each) on the source…`,
  );
  const config = demoConfig(source, target);
  await writeSampleTraffic(
    clusterSide(config, "source").writer({ compression: "lz4", maxBatchRecords: 1_000 }),
    all,
  );
  signal.throwIfAborted();

  const table = await leaseStoreFor(config, "embedded", { stateDir, logger });
  closers.add("lease table client", () => table.close());
  const admin = clusterSide(config, "source").admin();
  closers.add("source admin", () => admin.close());
  const retry = commandRetry(config, logger, signal);
  const sourceAdmin = retryingAdmin(admin, retry);

  const metrics = new DemoMetrics();
  const workers = WORKERS.map((workerId) => {
    const replicator = createReplicator(config, { ...table.backend, logger, metrics, workerId });
    closers.add(workerId, () => replicator.close());
    return replicator;
  });
  const total = DEMO_TOPICS.length * DEMO_PARTITIONS * DEMO_RECORDS_PER_PARTITION;
  return { source, target, config, table, sourceAdmin, retry, workers, metrics, total };
}

function demoConfig(source: DemoCluster, target: DemoCluster): MirrorConfig {
  return parseConfig({
    source: { brokers: source.bootstrapServers, alias: "idc1", requestTimeoutMs: 5_000 },
    target: { brokers: target.bootstrapServers, requestTimeoutMs: 1_500, compression: "lz4" },
    // MirrorMaker-style whitelist, as in the field notes.
    topics: { whitelist: DEMO_TOPICS.join("|") },
    batch: { maxRecords: 2_000, maxBytes: 256 * 1024, maxWaitMs: 100 },
    leases: { durationMs: 6_000, renewIntervalMs: 1_000, rebalanceIntervalMs: 300 },
  });
}

async function lagRows(setup: DemoSetup): Promise<ReturnType<typeof statusRows>> {
  const topics = [];
  for (const name of DEMO_TOPICS) {
    topics.push({
      name,
      offsets: await setup.sourceAdmin.listOffsets(name, [...Array(DEMO_PARTITIONS).keys()]),
    });
  }
  return statusRows(topics, await setup.table.store.list(), "earliest", Date.now());
}

const totalLag = (rows: ReturnType<typeof statusRows>): number => rows.reduce((n, r) => n + r.lag, 0);

/** Rounds of all three workers until no partition lags, showing progress as they go. */
async function replicateUntilCaughtUp(
  setup: DemoSetup,
  closers: Closers,
  io: CliIo,
  signal: AbortSignal,
): Promise<void> {
  io.stdout.write(`replicating ${DEMO_TOPICS.join("|")} with ${WORKERS.length} workers…\n`);
  const show = progressView(setup, io);
  let drawing = Promise.resolve();
  const ticker = setInterval(
    () => {
      drawing = drawing.then(show, () => {});
    },
    isTerminal(io) ? 250 : 2_000,
  );
  closers.add("progress ticker", () => clearInterval(ticker));
  let lag = setup.total;
  for (let round = 1; lag > 0; round++) {
    if (round > MAX_ROUNDS) throw new CliError(`not caught up after ${MAX_ROUNDS} rounds`, ExitCode.FAILED);
    await Promise.all(
      setup.workers.map((w) => w.worker.replicate(Date.now() + ROUND_MS, { stopWhenCaughtUp: true, signal })),
    );
    signal.throwIfAborted();
    lag = totalLag(await lagRows(setup));
  }
  clearInterval(ticker);
  await drawing;
  await show();
}

/** One progress update: a line per update, or a redrawn block of bars and owners on a terminal. */
function progressView(setup: DemoSetup, io: CliIo): () => Promise<void> {
  const live = isTerminal(io) ? new LiveBlock(io) : null;
  const startedAt = Date.now();
  return async () => {
    const rows = await lagRows(setup);
    const lag = totalLag(rows);
    const elapsed = ((Date.now() - startedAt) / 1_000).toFixed(1);
    if (live === null) {
      io.stdout.write(
        `  ${count(setup.total - lag)} / ${count(setup.total)} records copied, lag ${count(lag)}, ${elapsed} s\n`,
      );
      return;
    }
    const perTopic = DEMO_TOPICS.map((topic) => {
      const own = rows.filter((r) => r.topic === topic);
      const end = own.reduce((n, r) => n + r.logEnd, 0);
      const behind = own.reduce((n, r) => n + r.lag, 0);
      return `  ${topic.padEnd(14)} ${progressBar(end - behind, end)}  lag ${count(behind)}`;
    });
    const owners = renderTable(
      ["Topic", "Pid", "Owner", "Checkpoint", "LogEnd", "Lag"],
      rows.map((r) => [r.topic, r.partition, r.owner, r.checkpoint, r.logEnd, r.lag]),
    );
    live.draw(
      [`replicating with ${WORKERS.length} workers, ${elapsed} s`, ...perTopic, "", owners].join("\n"),
    );
  };
}

interface DemoOutcome {
  readonly ok: boolean;
  readonly problems: readonly string[];
  readonly verified: number;
  readonly partitions: number;
}

/** Source and target compared record for record, and the unlisted topic absent from the target. */
async function verifyDemo(setup: DemoSetup, closers: Closers, signal: AbortSignal): Promise<DemoOutcome> {
  const sourceReader = clusterSide(setup.config, "source").reader();
  const targetSide = clusterSide(setup.config, "target");
  const targetReader = targetSide.reader();
  const targetAdmin = targetSide.admin();
  closers.add("verify clients", async () => {
    await Promise.allSettled([sourceReader.close(), targetReader.close(), targetAdmin.close()]);
  });
  const target = {
    reader: retryingReader(targetReader, setup.retry),
    admin: retryingAdmin(targetAdmin, setup.retry),
  };
  const report = await verifyMirror({
    source: { reader: retryingReader(sourceReader, setup.retry), admin: setup.sourceAdmin },
    target,
    mapping: topicSelectorOf(setup.config),
    mirrorHeader: mirrorHeaderOf(setup.config),
    signal,
  });
  const leaked = (await target.admin.listTopics()).some((t) => t.name === DEMO_UNLISTED_TOPIC);
  const verified = report.partitions.reduce((n, p) => n + p.sourceRecords, 0);
  const problems = [
    ...report.topicProblems.map((p) => p.message),
    ...report.partitions.flatMap((p) => (p.mismatch === null ? [] : [p.mismatch.message])),
    ...(leaked ? [`${DEMO_UNLISTED_TOPIC} is not whitelisted but was created on the target`] : []),
    ...(verified === setup.total
      ? []
      : [`verified ${count(verified)} records, ${count(setup.total)} were written`]),
  ];
  const ok = report.ok && !leaked && verified === setup.total;
  return { ok, problems, verified, partitions: report.partitions.length };
}

/** Starts both clusters in parallel; whichever started is registered for cleanup even if the other failed. */
async function startClusters(closers: Closers, kind: DemoKafkaKind): Promise<[DemoCluster, DemoCluster]> {
  const start = (): Promise<DemoCluster> =>
    kind === "real" ? startRealKafka({ brokers: 3 }) : startMockKafka({ brokers: 3 });
  const started = await Promise.allSettled(
    ["source", "target"].map((side) =>
      start().then((kafka) => {
        closers.add(`${side} Kafka cluster`, () => kafka.stop());
        return kafka;
      }),
    ),
  );
  const [source, target] = started;
  if (source?.status === "fulfilled" && target?.status === "fulfilled") return [source.value, target.value];
  throw (started.find((s): s is PromiseRejectedResult => s.status === "rejected") as PromiseRejectedResult)
    .reason;
}

export const DEMO_COMMAND: CliCommand = defineCommand({
  name: "demo",
  summary: "two local clusters, sample traffic, three workers, verify",
  options: {
    kafka: {
      type: "string",
      arg: "KIND",
      help: "mock: librdkafka's mock clusters (start in a second);\nreal: Apache Kafka brokers, one JVM each",
      default: "mock",
    },
  },
  example: "kafka-mirror demo --kafka real",
  run: (values, io, signal) => {
    const kafka = values.kafka ?? "mock";
    if (!(DEMO_KAFKA_KINDS as readonly string[]).includes(kafka)) {
      throw usageError(
        `--kafka must be one of ${DEMO_KAFKA_KINDS.join(", ")}, got "${kafka}"`,
        commandHelp(DEMO_COMMAND),
      );
    }
    return demoCommand({ debug: values.debug ?? false, signal, kafka: kafka as DemoKafkaKind }, io);
  },
});
