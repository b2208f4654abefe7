/**
 * The interfaces the pure core depends on. Adapters implement them, one library each:
 * lib/kafka implements SourceReader, TargetWriter, ClusterAdmin and GroupAdmin with kafkajs; lib/dynamodb
 * implements LeaseStore with the AWS SDK. Tests use in-memory fakes of these, never of the
 * libraries.
 */

/*
 * Retries
 *
 * An adapter call is one bounded attempt: it ends by the request timeout or deadline it is given
 * and does not retry after failing. Within that bound it may do what one attempt needs: the
 * cluster client refreshes metadata and re-routes once after a leader change or lost connection;
 * one write is one attempt of the pump's, inside which the writer resends a batch of unknown
 * outcome with its original producer id and sequence so the broker de-duplicates it, and sends
 * again a batch that certainly did not land, until that write's own deadline (the lease's). A
 * failure carries `retryable`. Whoever owns the deadline decides whether to try again, and does so only with
 * `retryUntil` (lib/core/retry.ts): the pump while it holds the lease, the worker for lease-store
 * calls and planning (createTopics included, within the planning's deadline), the CLI and the lag
 * function with their command deadline. Those last two read through `retryingAdmin` and
 * `retryingReader` (lib/core/retrying-ports.ts, `retryRetryable`); never give those to the pump.
 *
 * In lib/kafka: the reader (fetch, describePartition, endOffsetForLeaderEpoch), the admin
 * (listTopics, createTopics, listOffsets, describeTopicConfigs, describeBrokerConfigs,
 * alterTopicConfigs, createPartitions) and the group admin (every call) make one attempt through
 * the cluster client (cluster-client.ts, `attempt`). The writer's steps of one write or fence (InitProducerId, the
 * transaction coordinator's requests, resends) run until that write's own deadline, never past it.
 *
 * In lib/dynamodb: one store call is one SDK call bounded by LEASE_STORE_MAX_ATTEMPTS (2) ×
 * leases.requestTimeoutMs (lib/dynamodb/client.ts); the SDK's one extra attempt after a throttle
 * or timeout is part of that bound. The worker and the pump decide what happens after it fails.
 */
import type {
  CopyUnits,
  FetchedBatches,
  FetchedRecords,
  FetchLimits,
  PartitionOffsets,
  SourceBatch,
  TopicInfo,
  TopicPartition,
  WriteResult,
} from "./model.js";
import type { ProvenanceStamp } from "./provenance.js";

/** Reads partitions of the source cluster from explicit offsets, with no consumer group. */
export interface SourceReader {
  /**
   * Reads records of one partition starting at `offset`. Concurrent calls for partitions led by
   * the same broker may be combined into one request. Throws ReplicatorError OFFSET_OUT_OF_RANGE
   * when `offset` is outside the log, KAFKA_RETRIABLE for transient failures.
   */
  fetch(tp: TopicPartition, offset: number, limits: FetchLimits): Promise<FetchedRecords>;
  /**
   * As fetch, for target.copy "batches": the data as source batches (SourceBatch), passed on
   * undecoded where they can be. A batch is never split: `limits.maxRecords` and `maxBytes` stop
   * the fetch before a batch that would pass them, except the first.
   */
  fetchBatches(tp: TopicPartition, offset: number, limits: FetchLimits): Promise<FetchedBatches>;
  /** SourceBatch.contentCrc of a batch fetchBatches returned (of this reader's cluster or the other's), computed if it was left null. */
  contentCrc(batch: SourceBatch): Promise<number>;
  /**
   * Which log the partition is now: the topic's id (null when the cluster has none) and the
   * partition's current leader epoch (-1 when unknown). Throws KAFKA_RETRIABLE for transient
   * failures.
   */
  describePartition(tp: TopicPartition): Promise<PartitionIdentity>;
  /**
   * OffsetForLeaderEpoch: the end offset of `leaderEpoch` in the partition's log as the current
   * leader has it (the log end when it is the current epoch), or -1 when the leader does not
   * know that epoch. An end below an offset read in that epoch means the log was truncated there.
   */
  endOffsetForLeaderEpoch(tp: TopicPartition, leaderEpoch: number): Promise<number>;
  close(): Promise<void>;
}

/** What identifies the log a source partition currently is. */
export interface PartitionIdentity {
  /** The topic id (Kafka 2.8+); a re-created topic gets a new one. Null when unknown. */
  readonly topicId: string | null;
  /** The partition's leader epoch; -1 when unknown. */
  readonly leaderEpoch: number;
}

/**
 * The latest instant (epoch ms, by the writer's clock) by which every request a write sends must
 * be finished. Called before each request, so a lease renewed during the write extends it.
 */
export type WriteDeadline = () => number;

/**
 * The transaction.timeout.ms fenced writes ask for, settled at the start of a run against the
 * target brokers' cap (transaction-timeout.ts), with the values an error about it names.
 */
export interface TransactionTimeout {
  /** What every InitProducerId asks for from now on: min(wantedMs, capMs). */
  readonly ms: number;
  /** Three lease durations, at most 15 minutes, never below minimumMs. */
  readonly wantedMs: number;
  /** The lowest transaction.max.timeout.ms of the target brokers; null when they did not say. */
  readonly capMs: number | null;
  /** The shortest timeout a write's transaction can live with (transaction-timeout.ts). */
  readonly minimumMs: number;
  readonly leaseDurationMs: number;
  readonly renewIntervalMs: number;
  /** 2 × target.requestTimeoutMs (WorkerSettings.writeSafetyMarginMs). */
  readonly writeSafetyMarginMs: number;
}

/**
 * What TargetWriter.endOpenTransaction did: nothing of ours was open; the open transaction is
 * aborted; or no request fitted before the deadline, so it waits for the next holder's fence or
 * the coordinator's transaction timeout.
 */
export type OpenTransactionEnd = "none" | "aborted" | "no-time";

/** Writes records to target partitions: acks=all, idempotent, retried. */
export interface TargetWriter {
  /**
   * Whether fence() fences (target.fencing "transactional"): each write is then a transaction of
   * the partition's own transactional id, so between two acknowledged writes of a holder only
   * other producers' records and its commit markers can become visible, never an earlier
   * holder's records (TargetTail relies on it to follow its writes past the markers).
   */
  readonly fences: boolean;
  /**
   * Appends `units` to `tp` in order and resolves once the target acknowledged them with
   * acks=all. Records go out as one or more batches; source batches (target.copy "batches") one
   * produce batch each, as they came but for their producer fields (SourceBatch), so a write cut
   * or acknowledged in part always ends at a unit's end. `WriteResult` counts records either way.
   * A record the target refuses rejects the promise with RECORD_REJECTED (details: topic,
   * partition, source offset); nothing is skipped.
   * With a stamp (records only) every record is written with one more header, after its own: key
   * `stamp.key`, value `stamp.prefix` followed by the record's source offset as int64 (see
   * provenance.ts).
   *
   * No request is sent that could still be outstanding after `deadline()`. When the next batches
   * cannot finish in time the write stops before sending them and resolves with what landed
   * (`WriteResult.acknowledged` < `records`): a cut write is certain, its tail was never sent.
   * It rejects only when the outcome is unknown (a request that may have landed could not be
   * confirmed in time, or the producer session was lost) or for a non-retryable error; with
   * PRODUCER_FENCED when another writer fenced `tp` (see fence): the partition is no longer ours.
   *
   * With fencing a write is one transaction, committed before the write resolves: nothing of a
   * resolved write is left open. The commit may outlast the lease (a successor's fence refuses
   * it, or its look sees it) but not `runDeadline` (epoch ms, the run's hard deadline: the
   * process may be gone after it): a transaction is begun only with a request's time left for
   * its commit, and a commit not answered by then fails the write as of unknown outcome.
   * @default none: the commit is bounded by its retries and the transaction's timeout only
   */
  write(
    tp: TopicPartition,
    units: CopyUnits,
    stamp?: ProvenanceStamp | null,
    deadline?: WriteDeadline,
    runDeadline?: number,
  ): Promise<WriteResult>;
  /**
   * Fences every earlier writer of `tp` (target.fencing "transactional"): once it resolves,
   * nothing they sent or will send becomes visible to read_committed readers (their open
   * transaction is aborted, their later requests refused), and this writer's next write is the
   * only one that can land. A holder calls it when it takes a partition and after a write of
   * unknown outcome, before it looks at the target. Resolves at once without fencing. Like a
   * write, it sends no request that could still be outstanding after `deadline()`: a fence that
   * landed after our lease ended would abort the next holder's transaction. Runs sharing one
   * writer (the CLI's overlapping rounds) share its producers, so fence() between them fences
   * nothing: their writes to a partition are kept apart by the writer running them one at a
   * time and by the lease gate.
   */
  fence(tp: TopicPartition, deadline?: WriteDeadline): Promise<void>;
  /**
   * The producer id our writes to `tp` carry since its last fence(): a look at the target tells
   * our copies from another writer's by it (target.copy "batches"). Null before the first fence
   * and without fencing.
   */
  producerId(tp: TopicPartition): bigint | null;
  /**
   * Ends the transaction a failed write left open on `tp` (target.fencing "transactional"), so
   * a holder lets the partition go with nothing open: until the next holder's fence or the
   * transaction timeout, an open transaction holds every read_committed consumer of `tp` at its
   * first record (the last stable offset). Runs after the partition's write in flight, which
   * commits or fails on its own. Like fence(), it sends nothing that could still be outstanding
   * after `deadline()`: only a holder may end it. Resolves "none" at once without fencing.
   */
  endOpenTransaction(tp: TopicPartition, deadline: WriteDeadline): Promise<OpenTransactionEnd>;
  /**
   * With fencing: the transaction.timeout.ms every later InitProducerId asks for, and the values
   * to name when the brokers refuse it. Without fencing: ignored.
   */
  useTransactionTimeout(timeout: TransactionTimeout): void;
  close(): Promise<void>;
}

/**
 * Metadata and offsets of one cluster. A change (createTopics, alterTopicConfigs,
 * createPartitions) resolves once the cluster's controller has made it, as Kafka's own
 * AdminClient does; each broker applies it from the metadata log a moment later, and reads it
 * serves (listTopics, describeTopicConfigs) show the old state until then. A caller that must see
 * its change reads until it shows; a producer meets a new partition as a retryable
 * UNKNOWN_TOPIC_OR_PARTITION until the partition's leader knows it.
 */
export interface ClusterAdmin {
  /** Every topic of the cluster with its partition count (internal topics included). */
  listTopics(): Promise<TopicInfo[]>;
  /**
   * Creates topics, each with the topic-level `configs` given (none: the broker's defaults); a
   * topic that already exists is not an error and keeps the configs it has. Throws
   * TOPIC_CREATE_FAILED naming the topic otherwise.
   */
  createTopics(
    specs: readonly {
      name: string;
      partitions: number;
      replicationFactor: number;
      configs?: ReadonlyMap<string, string>;
    }[],
  ): Promise<void>;
  /** Log start and high watermark of the given partitions of one topic. */
  listOffsets(topic: string, partitions: readonly number[]): Promise<PartitionOffsets[]>;
  /**
   * Topic-level configs set on each topic (not broker or static defaults): name -> value. Missing
   * topics are absent from the answer (for a moment after createTopics too, see above). Throws
   * TOPIC_CONFIG_FAILED naming the topic otherwise.
   */
  describeTopicConfigs(topics: readonly string[]): Promise<Map<string, ReadonlyMap<string, string>>>;
  /**
   * Broker-level configs `names` as each broker has them (DescribeConfigs of its BROKER resource,
   * asked of that broker: static, dynamic and default values alike): broker id -> name -> value,
   * a name the broker did not report left out. A broker that did not answer is absent; throws
   * (KAFKA_RETRIABLE, KAFKA_FATAL) only when none did.
   */
  describeBrokerConfigs(names: readonly string[]): Promise<Map<number, ReadonlyMap<string, string>>>;
  /**
   * Sets the given configs (IncrementalAlterConfigs SET only): never deletes or replaces other
   * settings. Throws TOPIC_CONFIG_FAILED naming the first topic the cluster refused.
   */
  alterTopicConfigs(changes: readonly { topic: string; set: ReadonlyMap<string, string> }[]): Promise<void>;
  /**
   * Grows topics to `count` partitions (CreatePartitions). A topic already at >= count is left as
   * it is (not an error). Throws PARTITIONS_CREATE_FAILED naming the topic otherwise, retryable
   * when Kafka refuses a count as no increase while the metadata read after shows fewer partitions
   * (a broker behind the controller).
   */
  createPartitions(changes: readonly { topic: string; count: number }[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * Consumer groups of one cluster, asked of each group's coordinator (FindCoordinator); for offset
 * translation, sync and failover. Each call is one bounded attempt (see "Retries"). Failures are
 * ReplicatorErrors naming the group: GROUP_NOT_EMPTY, GROUP_ADMIN_FAILED (retryable when Kafka
 * says so), AUTHENTICATION_FAILED; CONFIG_INVALID, before anything is sent, for an empty group id
 * or a commit offset that is not a non-negative safe integer (fetchOffsets' -1 included) or names
 * a partition twice. Both rebalance protocols are covered: classic groups and KIP-848 ("consumer")
 * groups, whose members only ConsumerGroupDescribe sees. Whether a described group is in use is
 * decided in one place, lib/offsets/group-liveness.ts.
 */
export interface GroupAdmin {
  /**
   * Every classic and KIP-848 consumer group of the cluster with its state ("Empty", "Stable",
   * ...) and type. Share and streams groups are not listed: their members are invisible here.
   */
  listGroups(): Promise<GroupListing[]>;
  /**
   * State and member count of each group, as its own protocol describes it (Kafka "Dead" + 0
   * members for unknown ids).
   */
  describeGroups(groupIds: readonly string[]): Promise<GroupDescription[]>;
  /** Committed offsets of a group (all its partitions, or the given topics'); offset -1 means none committed. */
  fetchOffsets(
    groupId: string,
    topics?: readonly string[],
  ): Promise<
    {
      readonly topic: string;
      readonly partition: number;
      readonly offset: number;
      readonly metadata: string | null;
    }[]
  >;
  /**
   * Commits offsets for a group with no active members (OffsetCommit with generation -1, as
   * Kafka's admin client does). Throws GROUP_NOT_EMPTY (a typed error naming the group) when the
   * coordinator refuses because the group has members (classic and KIP-848 coordinators alike
   * answer UNKNOWN_MEMBER_ID); other failures typed too.
   */
  commitOffsets(
    groupId: string,
    offsets: readonly {
      readonly topic: string;
      readonly partition: number;
      readonly offset: number;
      readonly metadata?: string;
    }[],
  ): Promise<void>;
  close(): Promise<void>;
}

/** The rebalance protocol a group runs: "classic" (JoinGroup/SyncGroup) or "consumer" (KIP-848). */
export type GroupType = "classic" | "consumer";

export interface GroupListing {
  readonly groupId: string;
  /** "consumer" for consumers of either protocol, "" for a group that only has committed offsets. */
  readonly protocolType: string;
  readonly state: string;
  /** "classic" too from a broker without ListGroups v5 (which came with KIP-848): it has no other kind. */
  readonly type: GroupType;
}

export interface GroupDescription {
  readonly groupId: string;
  readonly state: string;
  /** Members the coordinator holds now. */
  readonly members: number;
  /** "consumer" when ConsumerGroupDescribe answered for it, else "classic" (unknown ids too). */
  readonly type: GroupType;
}

// The lease store's port and its items: lease/model.ts.
export type {
  CheckpointResetReason,
  HeartbeatOptions,
  LeaderLease,
  Lease,
  LeaseStore,
  OffsetMapPoint,
  SourcePosition,
  TableSnapshot,
  WorkerHeartbeat,
  WorkerRecord,
} from "./lease/model.js";

export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export type LogFields = Record<string, unknown>;

/** Structured logging without payloads or secrets. */
export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

/** What the worker reports as it goes; adapters turn it into EMF, console output, etc. */
export interface ReplicationMetrics {
  batchCopied(event: {
    topic: string;
    partition: number;
    records: number;
    bytes: number;
    nextOffset: number;
    /** The source log end the fetch saw: the partition's lag after this batch is this less nextOffset. */
    highWatermark?: number;
    /** The largest record timestamp of the batch (ms since epoch); absent when no record has one. */
    newestTimestamp?: number;
    /** When the pump took the batch from the reader, by the worker's clock (record age = this less newestTimestamp). */
    fetchedAt?: number;
  }): void;
  recordsLost(event: { topic: string; partition: number; from: number; to: number }): void;
  /**
   * A partition stopped on a non-retryable error (once per failure: the fleet retries it after a
   * backoff), or, with `partition` -1, a whole topic left out of a run (topic-watch.ts). `code`
   * is the ReplicatorError's, a closed list.
   */
  partitionError(event: { topic: string; partition: number; code: string }): void;
  /**
   * The lease store skipped a table item it cannot read as a lease (another app's item, a hand
   * edit): its partition, if it is one, is not copied until the item is fixed.
   */
  leaseItemSkipped?(event: { leaseKey: string; attribute: string }): void;
  /**
   * target.copy "batches": a look at the target partition found batches of another producer
   * (another writer, or several sources into one topic). They are skipped, so exactly-once and
   * failover translation hold, but the target is no longer a copy of the source alone (`verify`
   * reports them). Once per look that met any, with how many.
   */
  otherWriterSeen?(event: { topic: string; partition: number; targetTopic: string; batches: number }): void;
}

/** Which source topics are mirrored and under which name they land in the target. */
export interface TopicMapping {
  /** Whole-name whitelist match, not blacklisted, and never an internal topic. */
  isSelected(sourceTopic: string): boolean;
  targetTopic(sourceTopic: string): string;
  /** One line for an operator: why none of these source topics is selected (near misses named). */
  whyNothingSelected(sourceTopics: readonly string[]): string;
}
