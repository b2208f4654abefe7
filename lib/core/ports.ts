/**
 * The interfaces the pure core depends on. Adapters implement them, one library each:
 * lib/kafka implements SourceReader, TargetWriter and ClusterAdmin with kafkajs; lib/dynamodb
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
 * In lib/kafka: the reader (fetch, describePartition, endOffsetForLeaderEpoch) and the admin
 * (listTopics, createTopics, listOffsets) make one attempt through the cluster client
 * (cluster-client.ts, `attempt`). The writer's steps of one write or fence (InitProducerId, the
 * transaction coordinator's requests, resends) run until that write's own deadline, never past it.
 *
 * In lib/dynamodb: one store call is one SDK call bounded by LEASE_STORE_MAX_ATTEMPTS (2) ×
 * leases.requestTimeoutMs (lib/dynamodb/client.ts); the SDK's one extra attempt after a throttle
 * or timeout is part of that bound. The worker and the pump decide what happens after it fails.
 */
import type {
  FetchedRecords,
  FetchLimits,
  MirrorRecord,
  PartitionOffsets,
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

/** Which source log a checkpoint belongs to, stored with it (see Lease.sourceTopicId). */
export interface SourcePosition {
  readonly topicId: string | null;
  /** Leader epoch of the last record copied; null when unknown. */
  readonly leaderEpoch: number | null;
}

/** Why a checkpoint was moved other than forward (see LeaseStore.resetCheckpoint). */
export type CheckpointResetReason = "topic-recreated" | "log-truncated";

/**
 * The latest instant (epoch ms, by the writer's clock) by which every request a write sends must
 * be finished. Called before each request, so a lease renewed during the write extends it.
 */
export type WriteDeadline = () => number;

/** Writes records to target partitions: acks=all, idempotent, retried. */
export interface TargetWriter {
  /**
   * Appends `records` to `tp` in order, as one or more batches, and resolves once the target
   * acknowledged them with acks=all. A record the target refuses rejects the promise with
   * RECORD_REJECTED (details: topic, partition, source offset); nothing is skipped.
   * With a stamp every record is written with one more header, after its own: key `stamp.key`,
   * value `stamp.prefix` followed by the record's source offset as int64 (see provenance.ts).
   *
   * No request is sent that could still be outstanding after `deadline()`. When the next batches
   * cannot finish in time the write stops before sending them and resolves with what landed
   * (`WriteResult.acknowledged` < `records`): a cut write is certain, its tail was never sent.
   * It rejects only when the outcome is unknown (a request that may have landed could not be
   * confirmed in time, or the producer session was lost) or for a non-retryable error; with
   * PRODUCER_FENCED when another writer fenced `tp` (see fence): the partition is no longer ours.
   */
  write(
    tp: TopicPartition,
    records: readonly MirrorRecord[],
    stamp?: ProvenanceStamp | null,
    deadline?: WriteDeadline,
  ): Promise<WriteResult>;
  /**
   * Fences every earlier writer of `tp` (target.fencing "transactional"): once it resolves,
   * nothing they sent or will send becomes visible to read_committed readers (their open
   * transaction is aborted, their later requests refused), and this writer's next write is the
   * only one that can land. A holder calls it when it takes a partition and after a write of
   * unknown outcome, before it looks at the target. Resolves at once without fencing. Like a
   * write, it sends no request that could still be outstanding after `deadline()`: a fence that
   * landed after our lease ended would abort the next holder's transaction.
   */
  fence(tp: TopicPartition, deadline?: WriteDeadline): Promise<void>;
  close(): Promise<void>;
}

/** Metadata and offsets of one cluster. */
export interface ClusterAdmin {
  /** Every topic of the cluster with its partition count (internal topics included). */
  listTopics(): Promise<TopicInfo[]>;
  /**
   * Creates topics; a topic that already exists is not an error. Throws TOPIC_CREATE_FAILED
   * naming the topic otherwise.
   */
  createTopics(
    specs: readonly { name: string; partitions: number; replicationFactor: number }[],
  ): Promise<void>;
  /** Log start and high watermark of the given partitions of one topic. */
  listOffsets(topic: string, partitions: readonly number[]): Promise<PartitionOffsets[]>;
  close(): Promise<void>;
}

/**
 * One lease item per source topic-partition. `counter` is the fencing token: it increases on
 * every change of owner, and every write that decides ownership or progress is conditional on
 * the owner and counter the writer observed.
 */
export interface Lease {
  readonly topic: string;
  readonly partition: number;
  /** Worker id of the holder, or null when free. */
  readonly owner: string | null;
  readonly counter: number;
  /** Epoch ms after which the lease is free to take; 0 when released. */
  readonly expiresAt: number;
  /** The next source offset to read, or null before the first checkpoint. */
  readonly checkpoint: number | null;
  /** Epoch ms of the last checkpoint that advanced, or null. */
  readonly lastProgressAt: number | null;
  /**
   * A worker that wants this lease for a fairer share: the holder finishes its in-flight batch,
   * checkpoints and releases, instead of having the lease taken from under a write (which would
   * copy that batch twice). Null when nobody asked. Cleared by claim, release and hand-over.
   */
  readonly handoffTo: string | null;
  /**
   * The pending write's target position, stored with the checkpoint (exactly-once mode): an
   * offset of the target partition at or before which nothing copied from `checkpoint` onwards
   * can have landed. A holder taking over reads the target from here, finds by provenance
   * headers the last source offset that landed, and resumes after it. Null or absent before the
   * first such checkpoint (and always in at-least-once mode).
   */
  readonly targetOffset?: number | null;
  /**
   * The source topic's id when the checkpoint was stored: a different id now means the topic was
   * re-created and the checkpoint belongs to a log that no longer exists. Null or absent for
   * items written before topic ids were kept (then no re-creation check is possible).
   */
  readonly sourceTopicId?: string | null;
  /**
   * Leader epoch of the last record copied before `checkpoint`: OffsetForLeaderEpoch of it tells
   * whether the source log was truncated below the checkpoint. Null or absent when unknown.
   */
  readonly sourceLeaderEpoch?: number | null;
}

/**
 * A worker's own item in the lease table (key `#worker/<workerId>`, which no Kafka topic can
 * produce): its heartbeat, written by the worker every round, and the partitions the leader
 * assigned to it, written by the leader only when they change. See lease-coordinator.ts.
 */
export interface WorkerHeartbeat {
  readonly workerId: string;
  /** Stable across runs (a Lambda schedule slot, a CLI worker's id): the leader gives a slot's partitions back to it. */
  readonly slot: string;
  readonly startedAt: number;
  /** The run is ending: the leader assigns its partitions to others. */
  readonly draining: boolean;
  /** The run's hard deadline: a draining worker's partitions move to anyone before it. */
  readonly deadline: number;
  /** Epoch ms after which the worker counts as dead. */
  readonly expiresAt: number;
}

export interface WorkerRecord extends WorkerHeartbeat {
  /** Partition keys (model.partitionKey) the leader assigned to this worker; null before any. */
  readonly assignment: readonly string[] | null;
}

export interface HeartbeatOptions {
  /**
   * Removes the assignment the item holds: a run's first heartbeat, and one after the worker was
   * presumed dead (its heartbeat expired), start without one, so a stale assignment never sends
   * the worker after leases the leader has since given to others.
   */
  readonly forgetAssignment?: boolean;
}

/** The leader item (`#leader`): a lease on the right to assign partitions. */
export interface LeaderLease {
  readonly owner: string | null;
  /** Grows on every take or renewal, so a stale view of the item can never take it. */
  readonly counter: number;
  readonly expiresAt: number;
}

/** The whole lease table as the leader reads it once per round (not consistent). */
export interface TableSnapshot {
  readonly leases: readonly Lease[];
  readonly workers: readonly WorkerRecord[];
  readonly leader: LeaderLease | null;
}

export interface LeaseStore {
  /** Creates a free lease item for each partition that has none. Existing items are untouched. */
  ensure(partitions: readonly TopicPartition[]): Promise<void>;
  /** Every lease in the table, read consistently (worker and leader items are not leases). */
  list(): Promise<Lease[]>;
  /** One lease, read consistently; null when the partition has no item. */
  lease(tp: TopicPartition): Promise<Lease | null>;
  /**
   * Leases, worker items and the leader item in one paginated, eventually consistent scan: the
   * leader's read. Every write decided on it is conditional, so a stale view costs a refused write.
   * Items it cannot read are skipped (and reported), never an error.
   */
  scan(): Promise<TableSnapshot>;
  /**
   * Writes the worker's heartbeat (creating its item on the first call) and returns the item as
   * it now is, with the assignment the leader last wrote: one write, no separate read.
   */
  heartbeat(beat: WorkerHeartbeat, options?: HeartbeatOptions): Promise<WorkerRecord>;
  /**
   * The leader publishes `assignment` in the worker's item. Only onto that worker's existing
   * item: false when it is gone (removed, never written), so no item without a heartbeat appears.
   */
  assign(workerId: string, assignment: readonly string[]): Promise<boolean>;
  /** Deletes a dead worker's item if it is still as `observed` (nobody heartbeat since). */
  removeWorker(observed: WorkerRecord): Promise<boolean>;
  /** The leader item, read eventually consistently; null when there is none yet. */
  leader(): Promise<LeaderLease | null>;
  /**
   * Takes or renews the leader item for `owner` until `expiresAt` (0 gives it up), if it is
   * still as `observed` (null: absent). Returns the new item, or null when someone changed it.
   */
  claimLeader(observed: LeaderLease | null, owner: string, expiresAt: number): Promise<LeaderLease | null>;
  /**
   * Takes `observed` for `owner` until `expiresAt`, if nobody changed it since it was read: same
   * owner, counter and expiry, so a renewal that landed after the read (the holder was alive
   * after all) makes the claim fail. Used for free and expired leases. Returns the new lease, or
   * null when another worker got there first or the holder renewed.
   */
  claim(observed: Lease, owner: string, expiresAt: number): Promise<Lease | null>;
  /** Extends a held lease. Throws LEASE_LOST when it is no longer held. */
  renew(held: Lease, expiresAt: number): Promise<Lease>;
  /**
   * Records progress. Succeeds only while the caller still holds the lease (owner, counter and
   * an expiry after `now`). Throws LEASE_LOST otherwise. `targetOffset` (see Lease.targetOffset)
   * is stored with the checkpoint, also one that stays put; omitted, the stored one is kept.
   */
  checkpoint(
    held: Lease,
    nextOffset: number,
    now: number,
    targetOffset?: number,
    /** Stored with the checkpoint when given; omitted, the stored one is kept. */
    source?: SourcePosition,
  ): Promise<Lease>;
  /**
   * Moves the checkpoint to `nextOffset`, backwards too, because the source log it referred to
   * diverged (re-created topic, truncated log). Succeeds only while the caller still holds the
   * lease (owner, counter, expiry after `now`) and the stored checkpoint is still `held`'s.
   * Stores `targetOffset` (null removes it) and `source` with it. Throws LEASE_LOST otherwise;
   * a retry of a reset that landed succeeds.
   */
  resetCheckpoint(
    held: Lease,
    nextOffset: number,
    now: number,
    reason: CheckpointResetReason,
    position: { readonly targetOffset: number | null; readonly source: SourcePosition },
  ): Promise<Lease>;
  /** Gives the lease up so others can take it at once. Returns false when it was not held. */
  release(held: Lease): Promise<boolean>;
  /**
   * Asks the holder of `observed` to hand it over to `requester` (the graceful form of stealing).
   * Succeeds only if the lease is still held as observed and nobody else asked first. Returns
   * false otherwise. The holder learns of it from the lease that renew and checkpoint return.
   */
  requestHandoff(observed: Lease, requester: string): Promise<boolean>;
  /**
   * Passes a held lease straight to the worker that asked for it (`held.handoffTo`), keeping its
   * checkpoint, bumping the counter (which fences the old holder) and giving the taker a fresh
   * expiry `expiresAt`: the giver's expiry may be about to run out, and the taker learns of the
   * lease only at its next look at the table. A plain release would not do: until the asker
   * holds a lease nobody counts it as live, so the releaser (or a third worker) would take the
   * lease straight back. Returns false when it was not held.
   */
  handOver(held: Lease, expiresAt: number): Promise<boolean>;
}

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
  }): void;
  recordsLost(event: { topic: string; partition: number; from: number; to: number }): void;
  partitionError(event: { topic: string; partition: number; code: string }): void;
  /**
   * The lease store skipped a table item it cannot read as a lease (another app's item, a hand
   * edit): its partition, if it is one, is not copied until the item is fixed.
   */
  leaseItemSkipped?(event: { leaseKey: string; attribute: string }): void;
}

/** Which source topics are mirrored and under which name they land in the target. */
export interface TopicMapping {
  /** Whole-name whitelist match, not blacklisted, and never an internal topic. */
  isSelected(sourceTopic: string): boolean;
  targetTopic(sourceTopic: string): string;
}
