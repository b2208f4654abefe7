/**
 * The lease store's port and the items it keeps (partition leases, worker heartbeats, the leader
 * lease), and the conditions its writes are made under, as data. Re-exported by ports.ts, so
 * the rest of the core sees one list of ports.
 */
import type { TopicPartition } from "../model.js";

/** Which source log a checkpoint belongs to, stored with it (see Lease.sourceTopicId). */
export interface SourcePosition {
  readonly topicId: string | null;
  /** Leader epoch of the last record copied; null when unknown. */
  readonly leaderEpoch: number | null;
}

/** Why a checkpoint was moved other than forward (see LeaseStore.resetCheckpoint). */
export type CheckpointResetReason = "topic-recreated" | "log-truncated";

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
   * Leader epoch of the source records copied from `checkpoint` on: the epoch of the last record
   * before it, or, for a checkpoint stored where a new epoch begins, that epoch (a holder stores
   * one there before writing any of its records, Checkpointer.enterEpoch); after a reset for a
   * truncation, the epoch that ended at the reset's offset (the next records start a new one).
   * So whatever a holder wrote past its stored checkpoint is of this epoch, and
   * OffsetForLeaderEpoch of it tells a clean leader change from a truncation under those records
   * (source-continuity.ts). Null or absent when unknown, and in a store item whose checkpoint
   * was moved without it (an older version of this code: items.ts, storedEpoch).
   */
  readonly sourceEpoch?: number | null;
  /**
   * A bounded history of (checkpoint, targetOffset) pairs of this lease, oldest first, thinned
   * so older points are sparser (offset-map.ts): where consumer-group offset
   * translation starts reading the target for a source offset below the current checkpoint.
   * Empty or absent before the first exactly-once checkpoint.
   */
  readonly offsetMap?: readonly OffsetMapPoint[];
  /**
   * target.copy "batches": the producer ids of this partition's transactional id on the target,
   * oldest first, at most MAX_PRODUCER_IDS. Kafka keeps an id across fences but gives a new one
   * when the epoch is exhausted or the transactional id expired unused, and a look tells our
   * copies from another writer's by producer id only. A holder stores its id (with a checkpoint
   * that may stay put) before it writes anything under it, so every copy of ours past
   * `targetOffset` carries one of these. Absent before the first such checkpoint.
   */
  readonly producerIds?: readonly bigint[];
}

/**
 * One point of a lease's offset map: every record copied from source offset `source` onwards sits
 * in the target partition at or after `target` (the invariant of Lease.targetOffset).
 */
export interface OffsetMapPoint {
  readonly source: number;
  readonly target: number;
  /**
   * Set on a map's first point when it was stored before anything of the lease was copied (its
   * first checkpoint, the pin): then no copy at all lies before `target`, and a source offset
   * below `source` translates from here too. Absent on a map begun later (an upgraded lease).
   */
  readonly origin?: true;
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
  /**
   * Partitions this run stopped on a non-retryable error lately, each with the epoch ms until
   * which it will not take them again (its backoff, failure-backoff.ts): the leader assigns them
   * to other workers meanwhile. Absent: none. Written with every heartbeat, by the worker only.
   */
  readonly backoff?: ReadonlyMap<string, number>;
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

/**
 * The lease protocol as the rest of the core uses it. Implemented once, by TableLeaseStore
 * (store.ts) over a LeaseTable (table.ts): DynamoDB (lib/dynamodb) or memory (memory-table.ts).
 */
export interface LeaseStore {
  /** Creates a free lease item for each partition that has none. Existing items are untouched. */
  ensure(partitions: readonly TopicPartition[]): Promise<void>;
  /** Every lease in the table, read consistently (worker and leader items are not leases). */
  list(): Promise<Lease[]>;
  /** One lease, read consistently; null when the partition has no item. */
  lease(tp: TopicPartition): Promise<Lease | null>;
  /**
   * Leases, worker items and the leader item in one pass over the table that may be stale
   * (eventually consistent): the leader's read. Every write decided on it is conditional, so a
   * stale view costs a refused write. Items it cannot read are skipped (and reported), never an
   * error.
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
  /**
   * A worker's item (null when it has none), read eventually consistently unless `consistent`:
   * how a worker sees a new assignment between its heartbeats (it decides nothing; what it names
   * is read again consistently before anything is taken), and, consistently, whether a worker
   * that asked for a lease is still there to take it.
   */
  worker(workerId: string, options?: { readonly consistent?: boolean }): Promise<WorkerRecord | null>;
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
    /** Replaces Lease.producerIds when given; omitted, the stored ones are kept. */
    producerIds?: readonly bigint[],
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
   * Takes back `requester`'s request on `observed` (its run is ending), so that a handover
   * landing later is refused and the holder releases the lease instead. Succeeds only if the
   * lease is still held as observed and the request is still `requester`'s; false otherwise
   * (then it may have been handed over already: read it).
   */
  withdrawHandoff(observed: Lease, requester: string): Promise<boolean>;
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

/** The attributes a condition can test; `key` exists exactly when the item does. */
export type ConditionAttribute =
  | "key"
  | "owner"
  | "counter"
  | "expiresAt"
  | "checkpoint"
  | "handoffTo"
  | "workerId";

/**
 * A condition on the item a write is about, as data, so that each backend applies the same one:
 * DynamoDB translates it into a ConditionExpression (lib/dynamodb/expressions.ts), the
 * memory table evaluates it (memory-table.ts). A comparison with an absent attribute (or a
 * missing item) is false, as in DynamoDB. The named pieces below build every condition the store
 * writes under (conditions.ts); the race each one prevents is written there.
 */
export type Condition =
  | { readonly test: "equals"; readonly attribute: ConditionAttribute; readonly value: string | number }
  | {
      readonly test: "lessThan" | "greaterThan";
      readonly attribute: ConditionAttribute;
      readonly value: number;
    }
  | { readonly test: "absent"; readonly attribute: ConditionAttribute }
  | { readonly test: "allOf" | "anyOf"; readonly pieces: readonly Condition[] };

export const equals = (attribute: ConditionAttribute, value: string | number): Condition => ({
  test: "equals",
  attribute,
  value,
});
export const lessThan = (attribute: ConditionAttribute, value: number): Condition => ({
  test: "lessThan",
  attribute,
  value,
});
export const greaterThan = (attribute: ConditionAttribute, value: number): Condition => ({
  test: "greaterThan",
  attribute,
  value,
});
/** The attribute is not stored; `absent("key")`: there is no item. */
export const absent = (attribute: ConditionAttribute): Condition => ({ test: "absent", attribute });
export const allOf = (...pieces: readonly Condition[]): Condition => ({ test: "allOf", pieces });
export const anyOf = (...pieces: readonly Condition[]): Condition => ({ test: "anyOf", pieces });

/** The holding a writer has: a held lease's owner and fencing counter. */
export interface Holding {
  readonly owner: string;
  readonly counter: number;
}

/**
 * The lease fence, as every conditional write on a held lease states it: the item is still the
 * holding the writer has. The counter grows on every claim, so a holder that lost the lease and
 * got it back (or a reused worker id) never passes for the holder it used to be.
 */
export function heldBy(holding: Holding): Condition {
  return allOf(equals("owner", holding.owner), equals("counter", holding.counter));
}

/** Not expired by the writer's clock. */
export function unexpiredAt(now: number): Condition {
  return greaterThan("expiresAt", now);
}

/** Exactly as a claimer read it: the same owner (or none), counter and expiry. */
export function unchangedSince(observed: {
  readonly owner: string | null;
  readonly counter: number;
  readonly expiresAt: number;
}): Condition {
  return allOf(
    observed.owner === null ? absent("owner") : equals("owner", observed.owner),
    equals("counter", observed.counter),
    equals("expiresAt", observed.expiresAt),
  );
}

/** Nobody asked the holder for the lease yet. */
export const noHandoffRequested: Condition = absent("handoffTo");

/** `worker` is the one that asked the holder for the lease. */
export function handoffRequestedBy(worker: string): Condition {
  return equals("handoffTo", worker);
}

/** The stored checkpoint is below `offset`, or there is none yet. */
export function checkpointBelow(offset: number): Condition {
  return anyOf(absent("checkpoint"), lessThan("checkpoint", offset));
}

/** The stored checkpoint is `offset`. */
export function checkpointAt(offset: number): Condition {
  return equals("checkpoint", offset);
}

/** No item under the key yet. */
export const itemAbsent: Condition = absent("key");
