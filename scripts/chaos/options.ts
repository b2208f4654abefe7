/**
 * What a chaos run (scripts/chaos/run.ts) can be asked to do, and its two sizings: the mock's
 * (DEFAULT_CHAOS, librdkafka's mock clusters, unchanged since the harness began) and real
 * Kafka's (REAL_KAFKA_CHAOS: two 3-broker Apache Kafka 4.1.2 clusters, six JVMs on the same
 * 2 cores as the workers), with the reason for every value that differs.
 */
import type { CompressionCodec } from "../../lib/config/compression.js";
import type { MirrorConfig } from "../../lib/config/schema.js";
import type { SourceIsolationLevel } from "../../lib/kafka/read/source-reader.js";
import type { TestbedKind } from "../../test/helpers/kafka-testbed.js";
import type { BurstOptions, FreezeOptions, Range } from "./faults.js";

/**
 * Which clusters: librdkafka's mock, or real Apache Kafka 4.1.2, started by
 * test/helpers/kafka-testbed.ts as every contract test starts them.
 */
export type ChaosKafka = TestbedKind;
export const CHAOS_KAFKAS: readonly ChaosKafka[] = ["mock", "real"];

/** Who copies: kafka-mirror's worker processes, or one dedicated MirrorMaker 2 node. */
export type ChaosReplicator = "kafka-mirror" | "mm2";
export const CHAOS_REPLICATORS: readonly ChaosReplicator[] = ["kafka-mirror", "mm2"];

/** The workers' `target.fencing` setting. */
export type TargetFencing = MirrorConfig["target"]["fencing"];
export const FENCING_MODES: readonly TargetFencing[] = ["transactional", "none"];
/** The workers' `target.copy`. */
export type TargetCopy = MirrorConfig["target"]["copy"];
export const COPY_MODES: readonly TargetCopy[] = ["records", "batches"];

/** Broker SIGKILLs and SIGSTOPs on real clusters (scripts/chaos/real-faults.ts). */
export interface BrokerChaosOptions {
  /** Broker faults per 3-broker cluster at most (0: none; the fault phase's end stops them too). */
  readonly maxPerCluster: number;
  /** Pause between two broker faults of one cluster, counted from the moment it healed. */
  readonly everyMs: Range;
  /** Share of broker faults that are SIGKILLs (then a restart); the rest are SIGSTOP, then SIGCONT. */
  readonly killShare: number;
  /** How long a killed broker stays dead before its restart. */
  readonly downMs: Range;
  /** How long a broker stays frozen. */
  readonly frozenMs: Range;
  /** Longest wait for a cluster to heal (the broker back, every replica in the ISR) after a fault. */
  readonly healTimeoutMs: number;
}

/** The "worker" faults of a MirrorMaker 2 run (scripts/chaos/mm2.ts), at random instants. */
export interface Mm2ChaosOptions {
  /** SIGKILLs, each followed by a new start (MM2 resumes from the offsets it committed in Kafka). */
  readonly kills: number;
  /** Freezes (SIGSTOP, then SIGCONT) within MM2's producer transaction.timeout.ms (Kafka's 60 s). */
  readonly freezes: number;
  /** Freezes longer than that transaction timeout: the coordinator aborts what MM2 had open. */
  readonly longFreezes: number;
  readonly freezeMs: Range;
  readonly longFreezeMs: Range;
  /** At least this long between the end of one MM2 fault and the next (it needs ~20 s to start). */
  readonly minUpMs: number;
  /** tasks.max of its MirrorSourceConnector. */
  readonly tasks: number;
  /** Once the faults are over, give up waiting for MM2 when the target has not grown for this long. */
  readonly stallMs: number;
}

export interface ChaosOptions {
  readonly kafka: ChaosKafka;
  /**
   * Brokers per cluster. The mock needs 3 on both (its broker faults and leader moves). On real
   * Kafka a 3-broker cluster gets broker faults (brokerChaos) and, the source, leader moves; a
   * 1-broker one gets neither (one broker down is the whole cluster down).
   */
  readonly brokers: { readonly source: 1 | 3; readonly target: 1 | 3 };
  readonly replicator: ChaosReplicator;
  readonly topics: number;
  readonly partitions: number;
  /** Records produced per partition during the fault phase. */
  readonly recordsPerPartition: number;
  /** Records per partition in each of the producer's rounds (one send per topic), spread evenly. */
  readonly recordsPerRound: number;
  readonly workers: number;
  /** How long faults and kills go on. */
  readonly faultPhaseMs: number;
  /** Random pause between two SIGKILLs. */
  readonly killEveryMs: Range;
  /** Mock only: random pause between two broker faults (down/up, leader, errors, RTT). */
  readonly faultEveryMs: Range;
  /** Real Kafka only: broker kills and freezes. */
  readonly brokerChaos: BrokerChaosOptions;
  /** DynamoDB Local outages (stop, then restart on its data) during the fault phase. */
  readonly dynamoOutages: number;
  /** Lease-store latency bursts through the proxy in front of DynamoDB Local (count 0: none). */
  readonly storeDelays: BurstOptions;
  /** Worker freezes, SIGSTOP then SIGCONT (count 0: none). */
  readonly freezes: FreezeOptions;
  /** Clean leader changes of source partitions during the fault phase (0: none). */
  readonly leaderMoves: number;
  /** Probability that a worker SIGKILLs itself right after a write was acknowledged. */
  readonly dieAfterAck: number;
  /**
   * Until some worker has died right after an ack, each new worker run SIGKILLs itself right after
   * its Nth acknowledged write (0 or absent: never), so a run takes the recovery path at least
   * once whatever the random draws.
   */
  readonly dieAtAck?: number;
  /** Random budget of one worker process. */
  readonly budgetMs: Range;
  /** The workers' leases.durationMs: long bursts and long freezes are measured against it. */
  readonly leaseDurationMs: number;
  /** The workers' source.requestTimeoutMs and target.requestTimeoutMs. */
  readonly requestTimeoutMs: { readonly source: number; readonly target: number };
  /** Longest wait for the workers to catch up once faults stop. */
  readonly catchUpTimeoutMs: number;
  /** How the comparison reads the target. */
  readonly targetIsolation: SourceIsolationLevel;
  /** The workers' `target.fencing`: "none" runs the old idempotent mode, which cannot fence. */
  readonly fencing: TargetFencing;
  /** The workers' `target.copy`; "batches" copies carry no provenance, so they are matched by content. */
  readonly copy: TargetCopy;
  /** The workers' `target.compression` ("batches": any other than "none" recompresses each batch). */
  readonly compression: CompressionCodec;
  /** MirrorMaker 2's faults and settings (replicator "mm2"). */
  readonly mm2: Mm2ChaosOptions;
  readonly seed: number;
  /** Keep the worker and driver logs even when nothing was wrong (they are kept when something was). */
  readonly keepLogs?: boolean;
  readonly log?: (line: string) => void;
}

/** The mock run's lease duration; real Kafka's is longer (see REAL_KAFKA_CHAOS). */
const MOCK_LEASE_MS = 8_000;

/** Freezes sized against a lease: short ones within it, long ones past it. */
function freezesFor(leaseMs: number, count: number): FreezeOptions {
  return { count, shortMs: [500, leaseMs - 1_000], longShare: 0.4, inWriteShare: 0.5 };
}

export const DEFAULT_CHAOS: ChaosOptions = {
  kafka: "mock",
  brokers: { source: 3, target: 3 },
  replicator: "kafka-mirror",
  topics: 3,
  partitions: 8,
  recordsPerPartition: 2_500,
  recordsPerRound: 50,
  workers: 3,
  // 120 s, not 90: a third or more of the kill draws land on a frozen worker and are skipped,
  // and at 90 s a run with many long freezes made only 27 kills.
  faultPhaseMs: 120_000,
  // Kills that land on a frozen worker are skipped (a third or more): this still makes >= 25
  // (~40-50; [500, 2_500] made 26 once).
  killEveryMs: [400, 2_000],
  faultEveryMs: [1_500, 4_000],
  brokerChaos: {
    maxPerCluster: Number.MAX_SAFE_INTEGER,
    everyMs: [5_000, 15_000],
    killShare: 0.5,
    downMs: [1_000, 8_000],
    frozenMs: [1_000, 10_000],
    healTimeoutMs: 180_000,
  },
  dynamoOutages: 2,
  storeDelays: { count: 14, shortMs: [300, 4_000], longShare: 0.35 },
  // On by default: with fencing "transactional" a frozen worker's late produce is refused by the
  // broker once the next holder's InitProducerId fenced it. With "none" it may land a duplicate.
  freezes: freezesFor(MOCK_LEASE_MS, 12),
  leaderMoves: 14,
  dieAfterAck: 0.01,
  budgetMs: [6_000, 15_000],
  leaseDurationMs: MOCK_LEASE_MS,
  requestTimeoutMs: { source: 5_000, target: 2_000 },
  catchUpTimeoutMs: 240_000,
  targetIsolation: "read_committed",
  fencing: "transactional",
  copy: "records",
  compression: "none",
  // Counts, not a rate: a fault spaced by MM2's own start time (~20 s on an idle machine, twice
  // that at a load of 15) would come a handful of times per run, and a few draws more or less
  // would decide whether a run makes the minimum. 5 + 2 + 2 fit a 300 s fault phase.
  mm2: {
    kills: 5,
    freezes: 2,
    longFreezes: 2,
    freezeMs: [2_000, 15_000],
    longFreezeMs: [65_000, 80_000],
    minUpMs: 15_000,
    tasks: 3,
    stallMs: 120_000,
  },
  seed: Date.now() % 1_000_000,
};

/**
 * Real Kafka's lease: 20 s instead of the mock's 8. A broker frozen or killed under a partition
 * stalls its acks=all writes until the controller fences the broker (broker.session.timeout.ms,
 * 4 s in the test bed) and the leader learns the smaller ISR, ~5-6 s in all, longer while six
 * JVMs share 2 cores; so the target's request timeout is 6 s (not 2, which turned every such
 * stall into an uncertain write), and a write starts only with 2 x 6 s of lease left. 20 s leaves
 * room for that, a renewal every second and a CPU-starved worker; at 8 s nearly every stall would
 * cost the lease.
 */
const REAL_LEASE_MS = 20_000;

/** The real-Kafka sizing (`npm run chaos -- --kafka real`), measured on the 2-core test machine. */
export const REAL_KAFKA_CHAOS: ChaosOptions = {
  ...DEFAULT_CHAOS,
  kafka: "real",
  // Fewer records: each write is a transaction replicated to three JVMs on the same 2 cores.
  recordsPerPartition: 1_000,
  // A round every 2.4 s, not 12: a freeze armed "in a write" waits 8 s for the worker's next
  // write, and new records are what start one (at 50 a round, 5 of 7 found no write to stop).
  recordsPerRound: 10,
  // Longer: freezes and long store delays scale with the lease (up to 40 s), and broker faults
  // take 20-60 s each to heal (a restarted JVM catching up, every replica back in the ISR).
  faultPhaseMs: 300_000,
  // A worker start costs ~1.5 s of CPU (node, tsx): kills every 0.4-2 s would leave the brokers
  // starved. This still makes >= 25 kills over 300 s with a third of the draws skipped.
  killEveryMs: [1_500, 5_000],
  freezes: freezesFor(REAL_LEASE_MS, 12),
  // Budgets longer than the mock's: claiming a partition on real Kafka is an InitProducerId
  // (which waits for the previous holder's transaction to be aborted) and a look at the target.
  budgetMs: [15_000, 40_000],
  leaseDurationMs: REAL_LEASE_MS,
  requestTimeoutMs: { source: 8_000, target: 6_000 },
  catchUpTimeoutMs: 600_000,
};
