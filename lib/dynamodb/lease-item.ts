/**
 * How the lease table's items (lib/core/lease/items.ts says what each must hold) are stored in
 * DynamoDB, and the strict way back. Every attribute is stored under its own name with one
 * DynamoDB type; a value of another type is LEASE_STORE_INVALID naming the key and the
 * attribute, never a value. Which attributes an item must have is the store's to check.
 *
 * Layout:
 *   leaseKey        S     "topic:partition", `#worker/<id>` or `#leader` (the partition key)
 *   topic, owner, handoffTo, sourceTopicId, workerId, slot          S (non-empty)
 *   partition, counter, expiresAt, checkpoint, lastProgressAt, updatedAt, targetOffset,
 *   sourceEpoch, sourceEpochAt, startedAt, deadline                 N (non-negative safe integer)
 *   draining        BOOL
 *   assignment      L(S)  lease keys the leader assigned
 *   backoff         M(N)  lease key -> epoch ms
 *   offsetMap       S     "c:t c:t ..." (offset-map-attribute.ts)
 *   producerIds     L(S)  target producer ids in decimal (int64 exceeds a safe N)
 *   sourceLeaderEpoch N   older versions' epoch, which could be stale: never read, removed with
 *                         every write of `sourceEpoch` (expressions.ts)
 * `updatedAt` is written, never read. The leader item is read leniently: what cannot be read is
 * left out, and the store reads such an item as given up (items.ts, leaderOf).
 */
import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { freeLeaseItem as freeItem, leaseOf } from "../core/lease/items.js";
import {
  type AttributeName,
  type Attributes,
  isCoordinationKey,
  isWorkerKey,
  KEY_ATTRIBUTE,
  LEADER_KEY,
  type Item as StoredItem,
  unreadableItem,
} from "../core/lease/table.js";
import { partitionKey, type TopicPartition } from "../core/model.js";
import type { Lease } from "../core/ports.js";
import { isReplicatorError } from "../errors.js";
import { encodeOffsetMap, parseOffsetMap } from "./offset-map-attribute.js";

/** An item as the SDK sends and returns it. */
export type Item = Record<string, AttributeValue>;

/** Older versions' epoch attribute (see the layout above). */
export const LEGACY_EPOCH_ATTRIBUTE = "sourceLeaderEpoch";

const MISSING_KEY = "(missing key)";

type Codec = "S" | "N" | "BOOL" | "L" | "M" | "offsetMap";

const CODECS: { readonly [A in AttributeName]: Codec } = {
  topic: "S",
  partition: "N",
  owner: "S",
  counter: "N",
  expiresAt: "N",
  checkpoint: "N",
  lastProgressAt: "N",
  updatedAt: "N",
  handoffTo: "S",
  targetOffset: "N",
  sourceTopicId: "S",
  sourceEpoch: "N",
  sourceEpochAt: "N",
  offsetMap: "offsetMap",
  producerIds: "L",
  workerId: "S",
  slot: "S",
  startedAt: "N",
  draining: "BOOL",
  deadline: "N",
  assignment: "L",
  backoff: "M",
};

/** What each kind of item is read for; anything else stored on it is left alone. */
const LEASE_READS: readonly AttributeName[] = [
  "topic",
  "partition",
  "owner",
  "counter",
  "expiresAt",
  "checkpoint",
  "lastProgressAt",
  "handoffTo",
  "targetOffset",
  "sourceTopicId",
  "sourceEpoch",
  "sourceEpochAt",
  "offsetMap",
  "producerIds",
];
const WORKER_READS: readonly AttributeName[] = [
  "workerId",
  "slot",
  "startedAt",
  "draining",
  "deadline",
  "expiresAt",
  "assignment",
  "backoff",
];

export function num(value: number): AttributeValue {
  return { N: String(value) };
}

export function keyItem(key: string): Item {
  return { [KEY_ATTRIBUTE]: { S: key } };
}

export function keyOf(tp: TopicPartition): Item {
  return keyItem(partitionKey(tp));
}

export function encodeValue<A extends AttributeName>(attribute: A, value: Attributes[A]): AttributeValue {
  switch (CODECS[attribute]) {
    case "S":
      return { S: value as string };
    case "N":
      return num(value as number);
    case "BOOL":
      return { BOOL: value as boolean };
    case "L":
      return { L: (value as readonly string[]).map((s) => ({ S: s })) };
    case "M":
      return {
        M: Object.fromEntries([...(value as ReadonlyMap<string, number>)].map(([k, t]) => [k, num(t)])),
      };
    case "offsetMap":
      return { S: encodeOffsetMap(value as Attributes["offsetMap"]) };
  }
}

/** `item` under `key`, as PutItem writes it. */
export function encodeItem(key: string, item: StoredItem): Item {
  const out = keyItem(key);
  for (const [attribute, value] of Object.entries(item) as [AttributeName, never][]) {
    if (value !== undefined) out[attribute] = encodeValue(attribute, value);
  }
  return out;
}

/** The key of a raw item; LEASE_STORE_INVALID when it has no string key. */
export function keyOfItem(raw: Item): string {
  const key = raw[KEY_ATTRIBUTE]?.S;
  if (key === undefined) throw unreadableItem(MISSING_KEY, KEY_ATTRIBUTE, "is missing or not a string");
  return key;
}

/** The item `raw` holds, its kind told by its key; LEASE_STORE_INVALID naming a mistyped attribute. */
export function decodeItem(key: string, raw: Item): StoredItem {
  if (key === LEADER_KEY) return leaderItem(raw);
  const reads = isCoordinationKey(key) ? (isWorkerKey(key) ? WORKER_READS : []) : LEASE_READS;
  const item: Record<string, unknown> = {};
  for (const attribute of reads) {
    const value = raw[attribute];
    if (value !== undefined) item[attribute] = decodeValue(key, attribute, value);
  }
  return item as StoredItem;
}

function decodeValue(key: string, attribute: AttributeName, value: AttributeValue): unknown {
  const invalid = (problem: string) => unreadableItem(key, attribute, problem);
  switch (CODECS[attribute]) {
    case "S":
      if (value.S === undefined || value.S === "") throw invalid("must be a non-empty string (S)");
      return value.S;
    case "N":
      return integer(value, () => invalid("must be a non-negative safe integer (N)"));
    case "BOOL":
      if (value.BOOL === undefined) throw invalid("must be a boolean (BOOL)");
      return value.BOOL;
    case "L":
      if (value.L === undefined) throw invalid("must be a list (L) of strings");
      return value.L.map((v) => {
        if (v.S === undefined) throw invalid("must be a list (L) of strings");
        return v.S;
      });
    case "M": {
      if (value.M === undefined) throw invalid("must be a map (M) of numbers");
      const fail = () => invalid("must be a map (M) of non-negative safe integers (N)");
      return new Map(Object.entries(value.M).map(([k, v]) => [k, integer(v, fail)]));
    }
    case "offsetMap":
      if (value.S === undefined || value.S === "") throw invalid("must be a non-empty string (S)");
      return parseOffsetMap(value.S, invalid);
  }
}

/**
 * Offsets and epoch ms are JS numbers in the core; anything beyond 2^53 would silently round and
 * could move a checkpoint, so it is rejected rather than approximated.
 */
function integer(value: AttributeValue, invalid: () => Error): number {
  const parsed = value.N === undefined ? Number.NaN : Number(value.N);
  if (!Number.isSafeInteger(parsed) || parsed < 0) throw invalid();
  return parsed;
}

/** The leader item, what of it can be read: a malformed one reads as given up (items.ts). */
function leaderItem(raw: Item): StoredItem {
  const counter = Number(raw.counter?.N ?? Number.NaN);
  const expiresAt = Number(raw.expiresAt?.N ?? Number.NaN);
  const owner = raw.owner?.S;
  return {
    ...(owner === undefined ? {} : { owner }),
    ...(Number.isSafeInteger(counter) ? { counter } : {}),
    ...(Number.isSafeInteger(expiresAt) ? { expiresAt } : {}),
  };
}

/** The lease a raw item holds; LEASE_STORE_INVALID naming the attribute when it holds none. */
export function leaseFromItem(raw: Item): Lease {
  const key = keyOfItem(raw);
  return leaseOf(key, decodeItem(key, raw));
}

/**
 * For a scan: an item that is not a lease becomes a value the caller skips and reports, a
 * coordination item is only named (lib/core/lease/reader.ts does the same for the store).
 */
export function readLeaseItem(
  raw: Item,
):
  | { readonly lease: Lease }
  | { readonly unreadable: { readonly leaseKey: string; readonly attribute: string } }
  | { readonly coordination: string } {
  const key = raw[KEY_ATTRIBUTE]?.S;
  if (key !== undefined && isCoordinationKey(key)) return { coordination: key };
  try {
    return { lease: leaseFromItem(raw) };
  } catch (error) {
    if (!isReplicatorError(error, "LEASE_STORE_INVALID")) throw error;
    const { leaseKey, attribute } = error.details;
    return { unreadable: { leaseKey: String(leaseKey), attribute: String(attribute) } };
  }
}

/** The item `ensure` writes for a partition that has no lease yet, as DynamoDB stores it. */
export function freeLeaseItem(tp: TopicPartition, now: number): Item {
  return encodeItem(partitionKey(tp), freeItem(tp, now));
}
