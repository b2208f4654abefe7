/**
 * The chaos run behind `npm run chaos` (and, scaled down, a test in `npm test`): a replicator
 * copies 3 topics x 8 partitions between two clusters while a producer writes to the source and
 * the fault loops SIGKILL and freeze the replicator's processes and fault the brokers of both
 * clusters. Then every target partition is compared with its source, record for record
 * (scripts/chaos/compare.ts).
 * - Clusters (`kafka`, started by test/helpers/kafka-testbed.ts): librdkafka's mock, 3 brokers
 *   each, where brokers go down and up, leaders move, requests fail and slow down (faults.ts); or
 *   real Apache Kafka 4.1.2, where on a 3-broker cluster brokers are SIGKILLed and restarted or
 *   SIGSTOPped, one per cluster at a time, and source leaders move through the Admin API
 *   (reassignment and preferred election: a new leader epoch, as a rolling restart gives;
 *   real-faults.ts), against Kafka's own fencing, transactions, leader epochs and read_committed.
 * - Replicator: kafka-mirror's worker PROCESSES with short budgets (workers.ts), under SIGKILLs,
 *   freezes (some inside a write), DynamoDB Local outages and lease-store latency bursts (a proxy
 *   in front of DynamoDB Local); or one MirrorMaker 2 node (mm2.ts, real Kafka only), SIGKILLed
 *   and started again, or frozen.
 */
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CompressionCodec } from "../../lib/config/compression.js";
import { type MirrorConfigInput, parseConfig } from "../../lib/config/schema.js";
import type { SourceIsolationLevel } from "../../lib/kafka/read/source-reader.js";
import { restoreBrokers, startClusterFaults } from "./cluster-faults.js";
import { compare, type Tally, waitForCatchUp } from "./compare.js";
import {
  dynamoOutages,
  type FaultContext,
  type FaultCounts,
  freezeWorkers,
  killWorkers,
  moveLeaders,
  storeDelays,
  stream,
} from "./faults.js";
import { type Mm2Counts, Mm2Node, mm2Faults, mm2TaskStates, waitForMm2CatchUp } from "./mm2.js";
import type { ChaosKafka, ChaosOptions, ChaosReplicator, TargetCopy, TargetFencing } from "./options.js";
import { produce } from "./producer.js";
import { type PoolCounts, WorkerPool } from "./workers.js";
import {
  type Clusters,
  type LeaseStore,
  type Started,
  startClusters,
  startLeaseStore,
  stopWorld,
} from "./world.js";

export { tally } from "./compare.js";
export {
  type ChaosOptions,
  COPY_MODES,
  DEFAULT_CHAOS,
  FENCING_MODES,
  REAL_KAFKA_CHAOS,
  type TargetCopy,
  type TargetFencing,
} from "./options.js";

export interface ChaosResult extends Tally, FaultCounts, PoolCounts, Partial<Mm2Counts> {
  /** The broker: librdkafka's mock or real Kafka. */
  testbed: ChaosKafka;
  replicator: ChaosReplicator;
  /** How the comparison read the target. */
  target_isolation: SourceIsolationLevel;
  /** The workers' target.fencing (kafka-mirror only). */
  fencing?: TargetFencing;
  /** The workers' target.copy (kafka-mirror only). */
  copy?: TargetCopy;
  /** The workers' target.compression (kafka-mirror only). */
  compression?: CompressionCodec;
  seed: number;
}

type RealClusters = Extract<Clusters, { kind: "real" }>;

const TABLE = "chaos-leases";
/** MirrorMaker 2's topics regex: the data topics, as kafka-mirror's whitelist. */
const TOPICS_PATTERN = "CHAOS-.*";

/** What the driver's signal handler must end: worker processes are not children that die with it. */
interface Running {
  pool?: WorkerPool;
}

export async function runChaos(options: ChaosOptions): Promise<ChaosResult> {
  const o = options;
  if (o.replicator === "mm2" && o.kafka !== "real") {
    // Tried: MM2 4.1.2's admin client reads the mock's ApiVersions, then sends nothing more until
    // its cluster id lookup times out and MM2 exits.
    throw new Error("MirrorMaker 2 runs against real Kafka only (--kafka real): it cannot talk to the mock");
  }
  const log = o.log ?? (() => {});
  const topics = Array.from({ length: o.topics }, (_, i) => `CHAOS-${i}`);
  const dbPath = mkdtempSync(join(tmpdir(), "kafka-mirror-chaos-"));
  const logDir = mkdtempSync(join(tmpdir(), "kafka-mirror-chaos-logs-"));
  const timeline = (line: string) => {
    appendFileSync(join(logDir, "driver.log"), `${new Date().toISOString()} ${line}\n`);
    log(line);
  };
  const result = emptyResult(o);
  const started: Started = { clusters: [] };
  const running: Running = {};
  // A Ctrl-C or kill of the driver must not leave worker processes behind (the JVMs die with it).
  const onSignal = (signal: NodeJS.Signals) => {
    running.pool?.killAll();
    process.kill(process.pid, signal);
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  let keepLogs = true;
  try {
    // First, so a run that dies before its JSON line can still be replayed (CHAOS_SEED).
    timeline(`seed ${o.seed}`);
    if (o.kafka === "real") {
      timeline(
        `starting Apache Kafka 4.1.2: ${o.brokers.source} source, ${o.brokers.target} target broker(s)`,
      );
    }
    const env = { o, topics, logDir, result, log, timeline };
    if (o.replicator === "kafka-mirror") {
      // One after the other: DynamoDB Local's JVM starting beside six Kafka JVMs on 2 cores was
      // not ready within its 60 s once (at a load of 15); alone it takes ~3 s.
      const store = await startLeaseStore(dbPath, TABLE, started);
      const clusters = await startClusters(o, topics, started);
      await copyWithKafkaMirror(env, clusters, store, running);
      await compare(
        clusters.src,
        clusters.dst,
        { topics, partitions: o.partitions },
        o.targetIsolation,
        result,
        o.copy === "batches" ? "content" : "provenance",
      );
      running.pool?.logErrors(log);
    } else {
      const clusters = await startClusters(o, topics, started);
      if (clusters.kind !== "real") throw new Error("MirrorMaker 2 needs real clusters");
      await copyWithMm2(env, clusters);
      const partitionsOf = { topics, partitions: o.partitions };
      await compare(clusters.src, clusters.dst, partitionsOf, o.targetIsolation, result, "content");
    }
    keepLogs = o.keepLogs === true || result.anomalies.length > 0;
    return result;
  } finally {
    process.removeListener("SIGINT", onSignal);
    process.removeListener("SIGTERM", onSignal);
    running.pool?.killAll();
    await stopWorld(started);
    rmSync(dbPath, { recursive: true, force: true });
    if (keepLogs) log(`worker and driver logs kept in ${logDir}`);
    else rmSync(logDir, { recursive: true, force: true });
  }
}

interface RunEnv {
  readonly o: ChaosOptions;
  readonly topics: readonly string[];
  readonly logDir: string;
  readonly result: ChaosResult;
  readonly log: (line: string) => void;
  /** Logs and writes to driver.log. */
  readonly timeline: (line: string) => void;
}

/** kafka-mirror's workers under every fault, until their checkpoints reached the source's end. */
async function copyWithKafkaMirror(env: RunEnv, clusters: Clusters, store: LeaseStore, running: Running) {
  const { o, topics, result, timeline } = env;
  // Longer than the longest burst: a held request lands late instead of being given up.
  const dynamodbTimeoutMs = Math.round(o.leaseDurationMs * 1.6) + 5_000;
  const pool = new WorkerPool(
    { dynamodb: store.proxy.endpoint, dynamodbTimeoutMs },
    mirrorConfig(o, clusters),
    o,
    result,
    env.logDir,
    timeline,
  );
  running.pool = pool;
  for (let i = 0; i < o.workers; i++) pool.spawn();
  const ctx = faultContext(o, result, timeline, {
    alive: () => pool.alive(),
    freezeInWrite: (child, withinMs) => pool.freezeInWrite(child, withinMs),
    lastWriteAt: (child) => pool.lastWriteAt(child),
  });
  const brokers = startClusterFaults(o, clusters, ctx, topics);
  await Promise.all([
    produce(clusters.src.bootstrapServers, topics, o, timeline),
    killWorkers(ctx, stream(o.seed, 1), o.killEveryMs, pool.killedByUs),
    ...brokers.loops,
    dynamoOutages(ctx, stream(o.seed, 3), store.db, o.dynamoOutages),
    storeDelays(ctx, stream(o.seed, 4), store.proxy, o.storeDelays),
    freezeWorkers(ctx, stream(o.seed, 5), o.freezes),
    moveLeaders(ctx, stream(o.seed, 6), sourceLeaderMoves(o), {
      mover: brokers.sourceMover,
      topics,
      partitions: o.partitions,
    }),
  ]);
  await restoreBrokers(o, clusters, timeline);
  timeline(`faults over: ${faultSummary(result)}; catching up`);
  const partitionsOf = { topics, partitions: o.partitions, timeoutMs: o.catchUpTimeoutMs };
  await waitForCatchUp(clusters.src, store.db, TABLE, partitionsOf, env.log);
  await pool.stop();
  const held = store.proxy.stats();
  timeline(
    `store delays held ${held.held} chunks: ${held.delivered} delivered late, ${held.dropped} dropped with their client, ${held.orphaned} with their server`,
  );
}

/** One MirrorMaker 2 node under kills, freezes and the broker faults, until it copied everything. */
async function copyWithMm2(env: RunEnv, clusters: RealClusters): Promise<void> {
  const { o, topics, result, timeline } = env;
  const counts: Mm2Counts = { mm2_starts: 0, mm2_exits: 0, freezes_past_txn_timeout: 0, mm2_tasks: "" };
  const node = new Mm2Node(
    // 512 MiB, not the shipped 2 GiB: seven JVMs share the machine, and the data is small.
    { source: clusters.src, target: clusters.dst, topics: TOPICS_PATTERN, tasks: o.mm2.tasks, heap: "512m" },
    env.logDir,
    counts,
    timeline,
  );
  try {
    // Before the faults: kills during MM2's first start would test nothing but its start.
    await node.start();
    const ctx = faultContext(o, result, timeline, {
      alive: () => [],
      freezeInWrite: async () => false,
      lastWriteAt: () => 0,
    });
    const brokers = startClusterFaults(o, clusters, ctx, topics);
    await Promise.all([
      produce(clusters.src.bootstrapServers, topics, o, timeline),
      mm2Faults(ctx, stream(o.seed, 1), node, o.mm2, counts),
      ...brokers.loops,
      moveLeaders(ctx, stream(o.seed, 6), sourceLeaderMoves(o), {
        mover: brokers.sourceMover,
        topics,
        partitions: o.partitions,
      }),
    ]);
    await restoreBrokers(o, clusters, timeline);
    timeline(`faults over: ${faultSummary(result)}; waiting for MirrorMaker 2`);
    const partitionsOf = { topics, partitions: o.partitions };
    const limits = { timeoutMs: o.catchUpTimeoutMs, stallMs: o.mm2.stallMs };
    await waitForMm2CatchUp(clusters.src, clusters.dst, partitionsOf, limits, timeline);
    counts.mm2_tasks = await mm2TaskStates(clusters.dst);
    timeline(`MirrorMaker 2 tasks at the end: ${counts.mm2_tasks}`);
  } finally {
    await node.stop();
    Object.assign(result, counts);
  }
}

/** Leader moves need another broker to move to: none on a 1-broker source. */
export function sourceLeaderMoves(o: ChaosOptions): number {
  return o.brokers.source > 1 ? o.leaderMoves : 0;
}

function faultSummary(r: ChaosResult): string {
  return [
    `${r.kills} kills`,
    `${r.freezes} freezes`,
    `${r.broker_faults} broker faults (${r.broker_kills} kills, ${r.broker_freezes} freezes)`,
    `${r.leader_moves} source leader moves`,
    `${r.dynamodb_outages} DynamoDB outages`,
    `${r.store_delays} store delays`,
  ].join(", ");
}

function faultContext(
  o: ChaosOptions,
  counts: FaultCounts,
  log: (line: string) => void,
  workers: Pick<FaultContext, "alive" | "freezeInWrite" | "lastWriteAt">,
): FaultContext {
  return {
    faultsEnd: Date.now() + o.faultPhaseMs,
    faultPhaseMs: o.faultPhaseMs,
    leaseDurationMs: o.leaseDurationMs,
    counts,
    log,
    frozen: new Set(),
    ...workers,
  };
}

/** The workers' config, parsed here once: a config the workers refuse must fail the run, not respawn them for ever. */
function mirrorConfig(o: ChaosOptions, clusters: Clusters): MirrorConfigInput {
  const config: MirrorConfigInput = {
    source: {
      brokers: clusters.src.bootstrapServers,
      alias: "chaos-src",
      requestTimeoutMs: o.requestTimeoutMs.source,
    },
    target: {
      brokers: clusters.dst.bootstrapServers,
      // Batches mode refuses a target alias (no header to stop a loop with).
      ...(o.copy === "batches" ? {} : { alias: "chaos-dst" }),
      requestTimeoutMs: o.requestTimeoutMs.target,
      fencing: o.fencing,
      copy: o.copy,
      compression: o.compression,
    },
    topics: { whitelist: TOPICS_PATTERN },
    batch: { maxRecords: 500, maxWaitMs: 200 },
    leases: {
      table: TABLE,
      durationMs: o.leaseDurationMs,
      renewIntervalMs: 1_000,
      rebalanceIntervalMs: 1_000,
    },
  };
  parseConfig(config);
  return config;
}

function emptyResult(o: ChaosOptions): ChaosResult {
  return {
    testbed: o.kafka,
    replicator: o.replicator,
    records: 0,
    lost: 0,
    duplicated: 0,
    out_of_order: 0,
    altered: 0,
    extra: 0,
    kills: 0,
    kills_after_ack: 0,
    broker_faults: 0,
    broker_kills: 0,
    broker_freezes: 0,
    preferred_elections: 0,
    dynamodb_outages: 0,
    store_delays: 0,
    freezes: 0,
    freezes_past_lease: 0,
    freezes_in_write: 0,
    leader_moves: 0,
    fenced_writes: 0,
    retention_losses: 0,
    recoveries: 0,
    worker_runs: 0,
    target_isolation: o.targetIsolation,
    ...(o.replicator === "kafka-mirror"
      ? { fencing: o.fencing, copy: o.copy, compression: o.compression }
      : {}),
    anomalies: [],
    seed: o.seed,
  };
}
