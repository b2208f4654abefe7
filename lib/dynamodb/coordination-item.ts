/**
 * The lease protocol's own items in the lease table, beside the leases (see lease-item.ts for
 * those), and the strict way back from DynamoDB. Nothing read is trusted: a malformed worker
 * item is skipped by the leader's scan (it cannot stop anything), a malformed leader item reads
 * as expired (any worker may take it: the take is conditional on what was read).
 *
 * `#worker/<workerId>` (one per worker run):
 *   workerId    S    the run's worker id (unique per run)
 *   slot        S    stable across runs (Lambda schedule slot, CLI worker id)
 *   startedAt   N    epoch ms the run started
 *   draining    BOOL the run is ending: assign its partitions to others
 *   deadline    N    the run's hard deadline
 *   expiresAt   N    the heartbeat's expiry: dead after it
 *   assignment  L(S) lease keys the leader assigned; absent before the first assignment
 *   backoff     M(N) lease key -> epoch ms until which the worker will not take that partition
 *                    again (it failed it); set or removed by every heartbeat, absent when none
 *   updatedAt   N    informational
 * `#leader`: owner S, counter N (+1 on every take and renewal), expiresAt N (0 once given up).
 */
import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import type { LeaderLease, WorkerHeartbeat, WorkerRecord } from "../core/ports.js";
import { ReplicatorError } from "../errors.js";
import { Attr, type Item, num } from "./lease-item.js";

export const LEADER_KEY = "#leader";
const WORKER_PREFIX = "#worker/";

export function workerKey(workerId: string): Item {
  return { [Attr.key]: { S: `${WORKER_PREFIX}${workerId}` } };
}

export const leaderKey: Item = { [Attr.key]: { S: LEADER_KEY } };

export function isWorkerKey(key: string): boolean {
  return key.startsWith(WORKER_PREFIX);
}

/**
 * The heartbeat's attributes, as an UpdateItem sets them (the assignment is the leader's). The
 * backoff only when there is one: the heartbeat removes the attribute otherwise (heartbeatRemoves).
 */
export function heartbeatValues(beat: WorkerHeartbeat): Record<string, AttributeValue> {
  const backoff = [...(beat.backoff ?? [])];
  return {
    [Attr.workerId]: { S: beat.workerId },
    [Attr.slot]: { S: beat.slot },
    [Attr.startedAt]: num(beat.startedAt),
    [Attr.draining]: { BOOL: beat.draining },
    [Attr.deadline]: num(beat.deadline),
    [Attr.expiresAt]: num(beat.expiresAt),
    ...(backoff.length === 0
      ? {}
      : { [Attr.backoff]: { M: Object.fromEntries(backoff.map(([k, t]) => [k, num(t)])) } }),
  };
}

/** The heartbeat's attributes it removes: an empty backoff is no attribute, so items stay small. */
export function heartbeatRemoves(beat: WorkerHeartbeat): string[] {
  return beat.backoff === undefined || beat.backoff.size === 0 ? [Attr.backoff] : [];
}

export function assignmentValue(keys: readonly string[]): AttributeValue {
  return { L: keys.map((k) => ({ S: k })) };
}

function invalid(key: string, attribute: string, problem: string): ReplicatorError {
  return new ReplicatorError("LEASE_STORE_INVALID", `item ${key}: attribute "${attribute}" ${problem}`, {
    details: { leaseKey: key, attribute },
  });
}

function integer(item: Item, key: string, attribute: string): number {
  const parsed = Number(item[attribute]?.N ?? Number.NaN);
  if (!Number.isSafeInteger(parsed) || parsed < 0)
    throw invalid(key, attribute, "must be a non-negative safe integer (N)");
  return parsed;
}

function text(item: Item, key: string, attribute: string): string {
  const value = item[attribute]?.S;
  if (value === undefined || value === "") throw invalid(key, attribute, "must be a non-empty string (S)");
  return value;
}

/** A worker item; LEASE_STORE_INVALID naming the attribute when it is malformed. */
export function workerFromItem(item: Item): WorkerRecord {
  const key = item[Attr.key]?.S ?? "(missing key)";
  const workerId = text(item, key, Attr.workerId);
  if (key !== `${WORKER_PREFIX}${workerId}`) throw invalid(key, Attr.workerId, `does not match the key`);
  const draining = item[Attr.draining]?.BOOL;
  if (draining === undefined) throw invalid(key, Attr.draining, "must be a boolean (BOOL)");
  const list = item[Attr.assignment];
  let assignment: string[] | null = null;
  if (list !== undefined) {
    if (list.L === undefined) throw invalid(key, Attr.assignment, "must be a list (L) of strings");
    assignment = list.L.map((v) => {
      if (v.S === undefined) throw invalid(key, Attr.assignment, "must be a list (L) of strings");
      return v.S;
    });
  }
  const backoff = backoffOf(item, key);
  return {
    workerId,
    slot: text(item, key, Attr.slot),
    startedAt: integer(item, key, Attr.startedAt),
    draining,
    deadline: integer(item, key, Attr.deadline),
    expiresAt: integer(item, key, Attr.expiresAt),
    ...(backoff === null ? {} : { backoff }),
    assignment,
  };
}

/** WorkerHeartbeat.backoff of an item; null when it has none. */
function backoffOf(item: Item, key: string): Map<string, number> | null {
  const attribute = item[Attr.backoff];
  if (attribute === undefined) return null;
  if (attribute.M === undefined) throw invalid(key, Attr.backoff, "must be a map (M) of numbers");
  const out = new Map<string, number>();
  for (const [lease, until] of Object.entries(attribute.M)) {
    const parsed = Number(until.N ?? Number.NaN);
    if (!Number.isSafeInteger(parsed) || parsed < 0)
      throw invalid(key, Attr.backoff, "must be a map (M) of non-negative safe integers (N)");
    out.set(lease, parsed);
  }
  return out;
}

/** The leader item; a malformed one reads as given up (expired), so it can be taken over. */
export function leaderFromItem(item: Item): LeaderLease {
  const counter = Number(item[Attr.counter]?.N ?? Number.NaN);
  const expiresAt = Number(item[Attr.expiresAt]?.N ?? Number.NaN);
  const owner = item[Attr.owner]?.S ?? null;
  if (!Number.isSafeInteger(counter) || !Number.isSafeInteger(expiresAt)) {
    return { owner: null, counter: Number.isSafeInteger(counter) ? counter : -1, expiresAt: 0 };
  }
  return { owner, counter, expiresAt };
}
