/**
 * How a Lease is stored as a DynamoDB item, and the strict way back. Items are read from a table
 * that people and other versions of this code can write to, so nothing read is trusted: a
 * missing or mistyped attribute is a LEASE_STORE_INVALID naming the key and the attribute, never
 * an `undefined` travelling into the lease rules.
 *
 * Layout (one item per source topic-partition):
 *   leaseKey        S  "topic:partition" (partition key)
 *   topic           S  source topic
 *   partition       N  source partition
 *   owner           S  worker id of the holder; absent while the lease is free
 *   counter         N  fencing token; +1 on every claim
 *   expiresAt       N  epoch ms; 0 when released or never claimed
 *   checkpoint      N  next source offset to read; absent before the first checkpoint
 *   lastProgressAt  N  epoch ms of the last checkpoint that advanced; absent before it
 *   updatedAt       N  epoch ms of the last write of any kind (for operators, never decides anything)
 *   handoffTo       S  worker id that asked the holder to hand the lease over; absent otherwise
 *   targetOffset    N  target position paired with the checkpoint (exactly-once); absent before it
 *   sourceTopicId   S  source topic id when the checkpoint was stored; absent on older items
 *   sourceEpoch     N  leader epoch of the source records copied from the checkpoint on (Lease.sourceEpoch);
 *                      absent when unknown
 *   sourceEpochAt   N  the checkpoint `sourceEpoch` was stored with: an older version moves the checkpoint
 *                      without touching either (it kept `sourceLeaderEpoch`, which could be stale after a
 *                      leader change and is never read), so an epoch counts only while its checkpoint is
 *                      still the item's (a fleet in the middle of a deploy runs both versions)
 *   offsetMap       S  past (checkpoint, targetOffset) pairs, "c:t c:t ..." (offset-map-attribute.ts);
 *                      absent before the first exactly-once checkpoint
 */
import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { partitionKey, type TopicPartition } from "../core/model.js";
import type { Lease } from "../core/ports.js";
import { isReplicatorError, ReplicatorError } from "../errors.js";
import { LEASE_KEY_ATTRIBUTE } from "./lease-table.js";
import { offsetMapOf } from "./offset-map-attribute.js";

/**
 * Keys of the protocol's own items start with '#', which no lease key can: topic names are
 * [a-zA-Z0-9._-]. `#leader` is the leader item, `#worker/<id>` a worker's.
 */
export function isCoordinationKey(key: string): boolean {
  return key.startsWith("#");
}

/** Attribute names, used through ExpressionAttributeNames so reserved words never bite. */
export const Attr = {
  key: LEASE_KEY_ATTRIBUTE,
  topic: "topic",
  partition: "partition",
  owner: "owner",
  counter: "counter",
  expiresAt: "expiresAt",
  checkpoint: "checkpoint",
  lastProgressAt: "lastProgressAt",
  updatedAt: "updatedAt",
  handoffTo: "handoffTo",
  targetOffset: "targetOffset",
  sourceTopicId: "sourceTopicId",
  sourceEpoch: "sourceEpoch",
  sourceEpochAt: "sourceEpochAt",
  /** Older versions' epoch, which could be stale: never read, removed by checkpoints and resets. */
  legacySourceLeaderEpoch: "sourceLeaderEpoch",
  // Worker items (coordination-item.ts).
  workerId: "workerId",
  slot: "slot",
  startedAt: "startedAt",
  draining: "draining",
  deadline: "deadline",
  assignment: "assignment",
  backoff: "backoff",
  offsetMap: "offsetMap",
} as const;

export type Item = Record<string, AttributeValue>;

/** ExpressionAttributeNames for `attributes`: `#name` for each, so reserved words never bite. */
export function expressionNames(...attributes: (keyof typeof Attr)[]): Record<string, string> {
  return Object.fromEntries(attributes.map((a) => [`#${a}`, Attr[a]]));
}

export function keyOf(tp: TopicPartition): Item {
  return { [Attr.key]: { S: partitionKey(tp) } };
}

export function num(value: number): AttributeValue {
  return { N: String(value) };
}

/** The item `ensure` writes for a partition that has no lease yet: free, never claimed. */
export function freeLeaseItem(tp: TopicPartition, now: number): Item {
  return {
    ...keyOf(tp),
    [Attr.topic]: { S: tp.topic },
    [Attr.partition]: num(tp.partition),
    [Attr.counter]: num(0),
    [Attr.expiresAt]: num(0),
    [Attr.updatedAt]: num(now),
  };
}

/** Why an item was not read as a lease: its key (as far as there is one) and the attribute at fault. */
export interface UnreadableItem {
  readonly leaseKey: string;
  readonly attribute: string;
}

/**
 * For a scan over the whole table: one item nobody can read (another app's, a hand edit, a newer
 * layout) must not stop every worker's rebalance, so it becomes a value the caller skips and
 * reports. Operations on one held lease use leaseFromItem and fail loudly instead.
 */
export function readLeaseItem(
  item: Item,
): { readonly lease: Lease } | { readonly unreadable: UnreadableItem } | { readonly coordination: string } {
  // Worker and leader items are the protocol's own, not leases: skipped quietly by lease readers.
  const key = item[Attr.key]?.S;
  if (key !== undefined && isCoordinationKey(key)) return { coordination: key };
  try {
    return { lease: leaseFromItem(item) };
  } catch (error) {
    if (!isReplicatorError(error, "LEASE_STORE_INVALID")) throw error;
    const { leaseKey: key, attribute } = error.details;
    return { unreadable: { leaseKey: String(key), attribute: String(attribute) } };
  }
}

export function leaseFromItem(item: Item): Lease {
  const keyValue = item[Attr.key]?.S;
  const key = keyValue ?? "(missing key)";
  const invalid = (attribute: string, problem: string): ReplicatorError =>
    new ReplicatorError("LEASE_STORE_INVALID", `lease item ${key}: attribute "${attribute}" ${problem}`, {
      details: { leaseKey: key, attribute },
    });

  const string = (attribute: string): string | null => {
    const value = item[attribute];
    if (value === undefined) return null;
    if (value.S === undefined || value.S === "") throw invalid(attribute, "must be a non-empty string (S)");
    return value.S;
  };
  const integer = (attribute: string): number | null => {
    const value = item[attribute];
    if (value === undefined) return null;
    const parsed = value.N === undefined ? Number.NaN : Number(value.N);
    // Offsets and epoch ms are JS numbers in the core; anything beyond 2^53 would silently
    // round and could move a checkpoint, so it is rejected rather than approximated.
    if (!Number.isSafeInteger(parsed) || parsed < 0) {
      throw invalid(attribute, "must be a non-negative safe integer (N)");
    }
    return parsed;
  };
  const required = <T>(attribute: string, value: T | null): T => {
    if (value === null) throw invalid(attribute, "is missing");
    return value;
  };

  if (keyValue === undefined) throw invalid(Attr.key, "is missing or not a string");
  const topic = required(Attr.topic, string(Attr.topic));
  const partition = required(Attr.partition, integer(Attr.partition));
  if (partitionKey({ topic, partition }) !== keyValue) {
    throw invalid(Attr.key, `does not match topic "${topic}" and partition ${partition}`);
  }
  return {
    topic,
    partition,
    owner: string(Attr.owner),
    counter: required(Attr.counter, integer(Attr.counter)),
    expiresAt: required(Attr.expiresAt, integer(Attr.expiresAt)),
    checkpoint: integer(Attr.checkpoint),
    lastProgressAt: integer(Attr.lastProgressAt),
    handoffTo: string(Attr.handoffTo),
    targetOffset: integer(Attr.targetOffset),
    sourceTopicId: string(Attr.sourceTopicId),
    sourceEpoch: storedEpoch(
      integer(Attr.sourceEpoch),
      integer(Attr.sourceEpochAt),
      integer(Attr.checkpoint),
    ),
    // Absent rather than empty when not stored, like the lease the fakes build.
    ...offsetMapOf(string(Attr.offsetMap), (problem) => invalid(Attr.offsetMap, problem)),
  };
}

/** A stored source epoch counts only with the checkpoint it was stored with (see sourceEpochAt above). */
export function storedEpoch(
  epoch: number | null,
  at: number | null,
  checkpoint: number | null,
): number | null {
  return epoch !== null && at !== null && at === checkpoint ? epoch : null;
}
