/**
 * The lease table's items and what they mean: which attributes each kind must have, and how an
 * item reads as a Lease, a WorkerRecord or the LeaderLease. Both backends store the same items
 * (table.ts), so these rules are written once. Items come from a table that people and other
 * versions of this code write to, so nothing read is trusted: an attribute missing, or a key
 * that does not match, is LEASE_STORE_INVALID naming the key and the attribute, never an
 * `undefined` travelling into the lease rules.
 *
 * Lease item (key "topic:partition", model.partitionKey):
 *   topic, partition  the source partition (required)
 *   owner             worker id of the holder; absent while the lease is free
 *   counter           fencing token; +1 on every claim (required)
 *   expiresAt         epoch ms; 0 when released or never claimed (required)
 *   checkpoint        next source offset to read; absent before the first checkpoint
 *   lastProgressAt    epoch ms of the last checkpoint that advanced; absent before it
 *   updatedAt         epoch ms of the last write of any kind (for operators)
 *   handoffTo         worker id that asked the holder to hand the lease over; absent otherwise
 *   targetOffset      target position paired with the checkpoint (exactly-once); absent before it
 *   sourceTopicId     source topic id when the checkpoint was stored; absent on older items
 *   sourceEpoch       leader epoch of the source records copied from the checkpoint on
 *   sourceEpochAt     the checkpoint `sourceEpoch` was stored with (see storedEpoch)
 *   offsetMap         past (checkpoint, targetOffset) pairs (offset-map.ts); absent before the first
 *   producerIds       target producer ids in decimal, oldest first (batches mode); absent before the first
 * Worker item (key `#worker/<workerId>`, one per worker run): workerId, slot, startedAt,
 *   draining, deadline, expiresAt (the heartbeat's: dead after it), all required; assignment
 *   (lease keys the leader assigned, absent before the first), backoff (lease key -> epoch ms
 *   until which the worker will not take it again; absent when none), updatedAt.
 * Leader item (`#leader`): owner, counter (+1 on every take and renewal), expiresAt (0 once given up).
 */
import { partitionKey, type TopicPartition } from "../model.js";
import type { LeaderLease, Lease, WorkerHeartbeat, WorkerRecord } from "./model.js";
import { type Attributes, ChangeSet, type Item, KEY_ATTRIBUTE, unreadableItem, workerKey } from "./table.js";

/** The value of a required `attribute`; LEASE_STORE_INVALID when the item has none. */
function required<A extends keyof Attributes>(key: string, item: Item, attribute: A): Attributes[A] {
  const value = item[attribute];
  if (value === undefined) throw unreadableItem(key, attribute, "is missing");
  return value as Attributes[A];
}

/** The lease `item` holds under `key`; LEASE_STORE_INVALID when it is not one. */
export function leaseOf(key: string, item: Item): Lease {
  const topic = required(key, item, "topic");
  const partition = required(key, item, "partition");
  if (partitionKey({ topic, partition }) !== key) {
    throw unreadableItem(key, KEY_ATTRIBUTE, `does not match topic "${topic}" and partition ${partition}`);
  }
  const checkpoint = item.checkpoint ?? null;
  return {
    topic,
    partition,
    owner: item.owner ?? null,
    counter: required(key, item, "counter"),
    expiresAt: required(key, item, "expiresAt"),
    checkpoint,
    lastProgressAt: item.lastProgressAt ?? null,
    handoffTo: item.handoffTo ?? null,
    targetOffset: item.targetOffset ?? null,
    sourceTopicId: item.sourceTopicId ?? null,
    sourceEpoch: storedEpoch(item.sourceEpoch ?? null, item.sourceEpochAt ?? null, checkpoint),
    // Absent rather than empty when not stored.
    ...(item.offsetMap === undefined ? {} : { offsetMap: item.offsetMap.map((p) => ({ ...p })) }),
    ...(item.producerIds === undefined ? {} : { producerIds: producerIdsOf(key, item.producerIds) }),
  };
}

/** Decimal int64s, as checkpoint.ts writes them; anything else is LEASE_STORE_INVALID. */
function producerIdsOf(key: string, stored: readonly string[]): bigint[] {
  return stored.map((id) => {
    if (!/^\d{1,19}$/.test(id) || BigInt(id) > 0x7fff_ffff_ffff_ffffn) {
      throw unreadableItem(key, "producerIds", `holds ${JSON.stringify(id)}, not a producer id (0..2^63-1)`);
    }
    return BigInt(id);
  });
}

/**
 * A stored source epoch counts only with the checkpoint it was stored with: an older version of
 * this code moves the checkpoint without touching either (it kept an epoch of its own, which
 * could be stale after a leader change), and a fleet in the middle of a deploy runs both.
 */
export function storedEpoch(
  epoch: number | null,
  at: number | null,
  checkpoint: number | null,
): number | null {
  return epoch !== null && at !== null && at === checkpoint ? epoch : null;
}

/** The item `ensure` writes for a partition that has no lease yet: free, never claimed. */
export function freeLeaseItem(tp: TopicPartition, now: number): Item {
  return { topic: tp.topic, partition: tp.partition, counter: 0, expiresAt: 0, updatedAt: now };
}

/** A worker's item; LEASE_STORE_INVALID naming the attribute when it is malformed. */
export function workerOf(key: string, item: Item): WorkerRecord {
  const workerId = required(key, item, "workerId");
  if (key !== workerKey(workerId)) throw unreadableItem(key, "workerId", "does not match the key");
  return {
    workerId,
    slot: required(key, item, "slot"),
    startedAt: required(key, item, "startedAt"),
    draining: required(key, item, "draining"),
    deadline: required(key, item, "deadline"),
    expiresAt: required(key, item, "expiresAt"),
    ...(item.backoff === undefined ? {} : { backoff: new Map(item.backoff) }),
    assignment: item.assignment === undefined ? null : [...item.assignment],
  };
}

/**
 * The leader item. One that is malformed (a backend leaves out what it cannot read) reads as
 * given up, so any worker can take it over: the take is conditional on what was read, and a
 * counter nobody can read (-1) makes the next take replace the item (coordination.ts).
 */
export function leaderOf(item: Item): LeaderLease {
  const { counter, expiresAt } = item;
  if (counter === undefined || expiresAt === undefined) {
    return { owner: null, counter: counter ?? -1, expiresAt: 0 };
  }
  return { owner: item.owner ?? null, counter, expiresAt };
}

/**
 * What a heartbeat writes: the worker's own attributes (the assignment is the leader's). An
 * empty backoff is no attribute, so items stay small; `forgetAssignment` removes the assignment.
 */
export function heartbeatChanges(beat: WorkerHeartbeat, now: number, forgetAssignment: boolean): ChangeSet {
  const changes = new ChangeSet()
    .with("workerId", beat.workerId)
    .with("slot", beat.slot)
    .with("startedAt", beat.startedAt)
    .with("draining", beat.draining)
    .with("deadline", beat.deadline)
    .with("expiresAt", beat.expiresAt);
  if (beat.backoff === undefined || beat.backoff.size === 0) changes.without("backoff");
  else changes.with("backoff", new Map(beat.backoff));
  changes.with("updatedAt", now);
  return forgetAssignment ? changes.without("assignment") : changes;
}
