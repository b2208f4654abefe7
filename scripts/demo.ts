/**
 * `npm run demo`: kafka-mirror end to end on this machine, for a newcomer's first run.
 *
 * Starts two local 3-broker Kafka clusters (librdkafka's mock) and DynamoDB Local, writes sample
 * traffic to the source, runs three workers concurrently in short rounds (as scheduled Lambdas
 * would) until every lease checkpoint reaches the source log end, then compares source and target
 * record for record. Exits 0 when they are identical, 1 on any difference or failure, 130 on
 * Ctrl-C; everything it started is stopped in every case.
 */
import { parseConfig } from "../lib/config/schema.js";
import type { MirrorRecord, RecordHeader, TopicPartition } from "../lib/core/model.js";
import type { ClusterAdmin, LogFields, Logger, ReplicationMetrics, SourceReader } from "../lib/core/ports.js";
import { DynamoDbLeaseStore } from "../lib/dynamodb/lease-store.js";
import { createLeaseTable } from "../lib/dynamodb/lease-table.js";
import { KafkaClusterAdmin } from "../lib/kafka/cluster-admin.js";
import { KafkaSourceReader } from "../lib/kafka/source-reader.js";
import { KafkaTargetWriter } from "../lib/kafka/target-writer.js";
import { createReplicator, type Replicator } from "../lib/replicator.js";
import { type DynamoDbLocal, startDynamoDbLocal } from "../test/helpers/dynamodb-local.js";
import { type MockKafka, startMockKafka } from "../test/helpers/mock-kafka.js";
import { firstDifference, readPartition } from "../test/helpers/partition-data.js";

const WHITELISTED = ["BIN-BI-TOPIC", "PUSH-BI-TOPIC", "USER-BI-TOPIC"] as const;
/** On the source but left out by the whitelist: it must never appear on the target. */
const UNLISTED = "SCRIPT-BI-TOPIC";
const PARTITIONS = 8;
const PER_TOPIC = 20_000;
const PER_PARTITION = PER_TOPIC / PARTITIONS;
const WORKERS = ["demo-worker-1", "demo-worker-2", "demo-worker-3"] as const;
const ROUND_BUDGET_MS = 5_000;
/** 60,000 records take 2-3 rounds; this bound only stops a broken build from looping forever. */
const MAX_ROUNDS = 20;
const CLEANUP_TIMEOUT_MS = 10_000;
const LEASE_TABLE = "kafka-mirror-demo-leases";

class Interrupted extends Error {
  constructor() {
    super("interrupted");
    this.name = "Interrupted";
  }
}

/** The outcome of a check that failed: printed as is, exit code 1. */
class DemoFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DemoFailure";
  }
}

/**
 * Only warnings and errors, on stderr, so the progress lines stay readable. Fields never hold
 * payloads. Silent once interrupted: Ctrl-C also reaches the brokers and the emulator (same
 * process group), and the workers' complaints about them vanishing would bury the exit.
 */
class ConsoleLogger implements Logger {
  readonly #signal: AbortSignal;
  constructor(signal: AbortSignal) {
    this.#signal = signal;
  }
  debug(): void {}
  info(): void {}
  warn(message: string, fields?: LogFields): void {
    this.#write("warn", message, fields);
  }
  error(message: string, fields?: LogFields): void {
    this.#write("error", message, fields);
  }
  #write(level: string, message: string, fields: LogFields | undefined): void {
    if (!this.#signal.aborted) process.stderr.write(`[${level}] ${message}${describeFields(fields)}\n`);
  }
}

function describeFields(fields: LogFields | undefined): string {
  if (fields === undefined || Object.keys(fields).length === 0) return "";
  try {
    return ` ${JSON.stringify(fields, (_key, value: unknown) =>
      value instanceof Error ? `${value.name}: ${value.message}` : value,
    )}`;
  } catch {
    return "";
  }
}

/**
 * Records lost make the run fail. Partition errors do not by themselves: a busy machine can time
 * out a request, and a worker retrying it is the replicator working; the logger has shown them
 * and the record-for-record check decides.
 */
class DemoMetrics implements ReplicationMetrics {
  readonly lost: string[] = [];
  partitionErrors = 0;
  batchCopied(): void {}
  recordsLost(event: { topic: string; partition: number; from: number; to: number }): void {
    this.lost.push(`${event.topic}/${event.partition}: offsets ${event.from}..${event.to}`);
  }
  partitionError(): void {
    this.partitionErrors++;
  }
}

/**
 * Sample traffic shaped like the field notes' BI topics: text keys (some absent), JSON-ish
 * values, every 10th a tombstone, two headers (one with a null value now and then) and event
 * timestamps that are not in offset order. Generated, so nothing here is read back as text.
 */
function sampleRecord(topic: string, partition: number, i: number): MirrorRecord {
  const id = partition * PER_PARTITION + i;
  const headers: RecordHeader[] = [
    { key: Buffer.from("trace-id"), value: Buffer.from(`${topic.toLowerCase()}-${id.toString(16)}`) },
    { key: Buffer.from("schema"), value: i % 17 === 0 ? null : Buffer.from("v2") },
  ];
  return {
    offset: i,
    timestamp: 1_700_000_000_000 + id * 40 - (i % 3) * 1_000,
    key: i % 25 === 0 ? null : Buffer.from(`user-${(id * 7919) % 5_000}`),
    value:
      i % 10 === 0
        ? null
        : Buffer.from(
            `{"event":"${topic}","seq":${id},"amount":${(id * 37) % 1_000},"pad":"${"x".repeat(i % 64)}"}`,
          ),
    headers,
  };
}

async function writeSampleTraffic(brokers: readonly string[], topics: readonly string[]): Promise<void> {
  const writer = new KafkaTargetWriter({ brokers, compression: "lz4", maxBatchRecords: 1_000 });
  try {
    await Promise.all(
      topics.flatMap((topic) =>
        Array.from({ length: PARTITIONS }, (_, partition) =>
          writer.write(
            { topic, partition },
            Array.from({ length: PER_PARTITION }, (_, i) => sampleRecord(topic, partition, i)),
          ),
        ),
      ),
    );
  } finally {
    await writer.close();
  }
}

function seconds(ms: number): string {
  return `${(ms / 1_000).toFixed(1)} s`;
}

const count = (n: number): string => n.toLocaleString("en-US");

/** Resources to close, newest first; each close is bounded so cleanup itself cannot hang. */
class Closers {
  readonly #closers: { name: string; close: () => Promise<void> }[] = [];

  add(name: string, close: () => Promise<void>): void {
    this.#closers.push({ name, close });
  }

  async closeAll(): Promise<void> {
    for (const { name, close } of this.#closers.splice(0).reverse()) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`timed out after ${CLEANUP_TIMEOUT_MS} ms`)),
          CLEANUP_TIMEOUT_MS,
        );
      });
      try {
        await Promise.race([close(), timeout]);
      } catch (error) {
        process.stderr.write(`[warn] closing ${name} failed: ${(error as Error).message}\n`);
      } finally {
        clearTimeout(timer);
      }
    }
  }
}

/** Starts all three in parallel; whatever did start is registered for cleanup even if another failed. */
async function startTestbed(closers: Closers): Promise<[MockKafka, MockKafka, DynamoDbLocal]> {
  const started = await Promise.allSettled([
    startMockKafka({ brokers: 3 }).then((kafka) => {
      closers.add("source Kafka cluster", () => kafka.stop());
      return kafka;
    }),
    startMockKafka({ brokers: 3 }).then((kafka) => {
      closers.add("target Kafka cluster", () => kafka.stop());
      return kafka;
    }),
    startDynamoDbLocal().then((dynamo) => {
      closers.add("DynamoDB Local", () => dynamo.stop());
      return dynamo;
    }),
  ]);
  const [source, target, dynamo] = started;
  if (source.status === "fulfilled" && target.status === "fulfilled" && dynamo.status === "fulfilled") {
    return [source.value, target.value, dynamo.value];
  }
  const failure = started.find((s): s is PromiseRejectedResult => s.status === "rejected");
  throw failure?.reason;
}

interface Verification {
  readonly partitions: number;
  readonly records: number;
}

/** Compares every whitelisted partition of source and target, record for record. */
async function verify(
  sides: {
    source: { reader: SourceReader; admin: ClusterAdmin };
    target: { reader: SourceReader; admin: ClusterAdmin };
  },
  signal: AbortSignal,
): Promise<Verification> {
  let records = 0;
  let partitions = 0;
  const targetTopics = await sides.target.admin.listTopics();
  if (targetTopics.some((t) => t.name === UNLISTED)) {
    throw new DemoFailure(`${UNLISTED} is not whitelisted but was created on the target`);
  }
  for (const topic of WHITELISTED) {
    const onTarget = targetTopics.find((t) => t.name === topic);
    if (onTarget?.partitions !== PARTITIONS) {
      throw new DemoFailure(
        `${topic} has ${onTarget?.partitions ?? "no"} partitions on the target, expected ${PARTITIONS}`,
      );
    }
    for (let partition = 0; partition < PARTITIONS; partition++) {
      if (signal.aborted) throw new Interrupted();
      const tp: TopicPartition = { topic, partition };
      const [fromSource, fromTarget] = await Promise.all([
        readPartition(sides.source.reader, sides.source.admin, tp),
        readPartition(sides.target.reader, sides.target.admin, tp),
      ]);
      // An empty or truncated source would make "identical" meaningless.
      if (fromSource.length !== PER_PARTITION) {
        throw new DemoFailure(
          `${topic}/${partition}: source holds ${fromSource.length} records, ${PER_PARTITION} were written`,
        );
      }
      const at = firstDifference(fromSource, fromTarget);
      if (at !== -1) {
        const sourceOffset = fromSource[at]?.offset ?? "end of log";
        const targetOffset = fromTarget[at]?.offset ?? "end of log";
        throw new DemoFailure(
          `${topic}/${partition} differs at record #${at} (source offset ${sourceOffset}, target offset ${targetOffset}); ` +
            `source has ${fromSource.length} records, target ${fromTarget.length}`,
        );
      }
      records += fromSource.length;
      partitions++;
    }
  }
  return { partitions, records };
}

async function run(closers: Closers, signal: AbortSignal): Promise<void> {
  const checkSignal = (): void => {
    if (signal.aborted) throw new Interrupted();
  };
  const startedAt = Date.now();
  console.log("kafka-mirror demo: starting two 3-broker Kafka clusters and DynamoDB Local…");
  const [source, target, dynamo] = await startTestbed(closers);
  checkSignal();
  const leaseClient = dynamo.client();
  closers.add("DynamoDB client", async () => leaseClient.destroy());
  await createLeaseTable(leaseClient, LEASE_TABLE);

  for (const topic of [...WHITELISTED, UNLISTED]) await source.createTopic(topic, PARTITIONS);
  checkSignal();
  const total = WHITELISTED.length * PER_TOPIC;
  console.log(
    `writing ${count(PER_TOPIC)} records to each of ${[...WHITELISTED, UNLISTED].join(", ")} ` +
      `(${PARTITIONS} partitions each) on the source…`,
  );
  await writeSampleTraffic(source.bootstrapServers, [...WHITELISTED, UNLISTED]);
  checkSignal();

  const sourceAdmin = new KafkaClusterAdmin({ brokers: source.bootstrapServers });
  const targetAdmin = new KafkaClusterAdmin({ brokers: target.bootstrapServers });
  closers.add("source admin", () => sourceAdmin.close());
  closers.add("target admin", () => targetAdmin.close());
  const logEnds = new Map<string, number>();
  for (const topic of WHITELISTED) {
    for (const o of await sourceAdmin.listOffsets(topic, [...Array(PARTITIONS).keys()])) {
      logEnds.set(`${topic}:${o.partition}`, o.logEndOffset);
    }
  }

  const config = parseConfig({
    source: { brokers: source.bootstrapServers, alias: "idc1", requestTimeoutMs: 5_000 },
    target: { brokers: target.bootstrapServers, requestTimeoutMs: 1_500, compression: "lz4" },
    // MirrorMaker-style whitelist, as in the field notes.
    topics: { whitelist: WHITELISTED.join("|") },
    batch: { maxRecords: 2_000, maxBytes: 256 * 1024, maxWaitMs: 100 },
    leases: { table: LEASE_TABLE, durationMs: 6_000, renewIntervalMs: 1_000, rebalanceIntervalMs: 300 },
  });
  const logger = new ConsoleLogger(signal);
  const metrics = new DemoMetrics();
  const workers: Replicator[] = WORKERS.map((workerId) => {
    // One DynamoDB client per worker, as each Lambda would have its own.
    const client = dynamo.client();
    closers.add(`${workerId} DynamoDB client`, async () => client.destroy());
    const replicator = createReplicator(config, { dynamodb: client, logger, metrics, workerId });
    closers.add(workerId, () => replicator.close());
    return replicator;
  });
  const leaseView = new DynamoDbLeaseStore({ client: leaseClient, tableName: LEASE_TABLE });
  /** Records behind the checkpoints: what a crash now would still have to copy. */
  const lag = async (): Promise<number> => {
    const checkpoints = new Map(
      (await leaseView.list()).map((l) => [`${l.topic}:${l.partition}`, l.checkpoint]),
    );
    let behind = 0;
    for (const [key, end] of logEnds) behind += end - (checkpoints.get(key) ?? 0);
    return behind;
  };

  console.log(
    `replicating ${WHITELISTED.join("|")} with ${WORKERS.length} workers in rounds of ${seconds(ROUND_BUDGET_MS)}…`,
  );
  const replicationStart = Date.now();
  let behind = await lag();
  let round = 0;
  while (behind > 0) {
    checkSignal();
    round++;
    if (round > MAX_ROUNDS) {
      throw new DemoFailure(`not caught up after ${MAX_ROUNDS} rounds: ${count(behind)} records behind`);
    }
    const summaries = await Promise.all(
      workers.map((w) => w.worker.replicate(Date.now() + ROUND_BUDGET_MS, { signal })),
    );
    checkSignal();
    behind = await lag();
    const held = summaries.map((s) => s.partitions.length).join("/");
    const percent = Math.floor(((total - behind) / total) * 100);
    console.log(
      `  round ${round}: ${count(total - behind)} / ${count(total)} records copied (${percent}%), ` +
        `lag ${count(behind)}; partitions each worker held during the round ${held}; ${seconds(Date.now() - replicationStart)}`,
    );
  }
  const replicationMs = Date.now() - replicationStart;
  if (metrics.lost.length > 0) {
    throw new DemoFailure(`the workers reported records lost: ${metrics.lost.join("; ")}`);
  }
  if (metrics.partitionErrors > 0) {
    process.stderr.write(
      `[warn] ${metrics.partitionErrors} partition error(s) on the way, retried (see above)\n`,
    );
  }

  console.log("verifying: reading every whitelisted partition from both clusters…");
  const sourceReader = new KafkaSourceReader({ brokers: source.bootstrapServers });
  const targetReader = new KafkaSourceReader({ brokers: target.bootstrapServers });
  closers.add("source reader", () => sourceReader.close());
  closers.add("target reader", () => targetReader.close());
  const result = await verify(
    {
      source: { reader: sourceReader, admin: sourceAdmin },
      target: { reader: targetReader, admin: targetAdmin },
    },
    signal,
  );
  if (result.records !== total) {
    throw new DemoFailure(`verified ${result.records} records, expected ${total}`);
  }
  console.log(
    `kafka-mirror demo: ${result.records} records, ${WHITELISTED.length} topics, ${result.partitions} partitions ` +
      `copied in ${seconds(replicationMs)}; verify: OK (source and target identical, ${UNLISTED} not copied); ` +
      `total ${seconds(Date.now() - startedAt)}`,
  );
}

async function main(): Promise<number> {
  const closers = new Closers();
  const abort = new AbortController();
  let interruptedAt = 0;
  const onSignal = (name: NodeJS.Signals): void => {
    if (!abort.signal.aborted) {
      interruptedAt = Date.now();
      process.stderr.write(`\n${name}: stopping and cleaning up (press Ctrl-C again to quit at once)…\n`);
      abort.abort();
      return;
    }
    // The DynamoDB Local helper re-raises the signal it saw once it killed the emulator; only a
    // second press by a person (a moment later) skips the cleanup.
    if (Date.now() - interruptedAt > 1_000) process.exit(130);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  // On Ctrl-C, go straight to cleanup rather than wait for the workers to wind down against
  // brokers that the same Ctrl-C may already have stopped; closing their clients ends them.
  const interrupted = new Promise<never>((_, reject) => {
    abort.signal.addEventListener("abort", () => reject(new Interrupted()), { once: true });
  });
  const running = run(closers, abort.signal);
  running.catch(() => undefined);
  try {
    await Promise.race([running, interrupted]);
    return 0;
  } catch (error) {
    if (error instanceof Interrupted || abort.signal.aborted) return 130;
    if (error instanceof DemoFailure) {
      console.error(`kafka-mirror demo: FAILED: ${error.message}`);
    } else {
      console.error("kafka-mirror demo: FAILED with an unexpected error:");
      console.error(error);
      if (error instanceof Error && /setup:testbed/.test(error.message)) {
        console.error(
          "hint: `npm run demo` runs `npm run setup:testbed` first; run that on its own to see why it failed.",
        );
      }
    }
    return 1;
  } finally {
    await closers.closeAll();
  }
}

// Explicit exit: a socket or timer some library left behind must not keep the demo running.
process.exit(await main());
