/**
 * The leader's pure decision: which live worker should hold which partition. Balanced (max minus
 * min partitions per live non-draining worker <= 1), sticky (a partition stays with the worker
 * that has it, or goes back to its slot), and capped (at most `maxChanges` partitions change
 * hands per round; the next round goes on from there). A partition a worker failed lately (in
 * its backoff, WorkerHeartbeat.backoff) goes to another worker, over its quota if need be, or to
 * nobody while every receiver has it in its backoff. An assignment is only a wish: ownership
 * still changes by the lease item's conditional claim and handover writes alone.
 */
import type { Lease, WorkerRecord } from "../ports.js";

export interface AssignmentInput {
  /** Partition keys to assign (the leader's plan), any order. */
  readonly partitions: readonly string[];
  /** Lease items by partition key (for who holds what now). */
  readonly leases: ReadonlyMap<string, Lease>;
  /** Every worker item, dead ones included (their slot still names a successor). */
  readonly workers: readonly WorkerRecord[];
  readonly now: number;
  /** Partitions whose assignee may change this round. */
  readonly maxChanges: number;
  /** A draining worker without a successor keeps its partitions until this long before its deadline. */
  readonly drainLeadMs: number;
}

export interface AssignmentPlan {
  /** Every live worker's new assignment (sorted keys); non-live workers are absent. */
  readonly assignments: ReadonlyMap<string, readonly string[]>;
  /** Partitions whose assignee changed (capped by maxChanges). */
  readonly changes: number;
  /** Changes wanted but left for a later round by the cap. */
  readonly deferred: number;
}

interface Placement {
  /** Where the partition is now, if that worker may keep it (a live receiver). */
  readonly current: string | null;
  /** A worker of the same slot it should go to, when its current worker is draining or dead. */
  readonly successor: string | null;
  /** Kept by a draining worker (excluded from balancing). */
  readonly pinned: string | null;
}

export function assignPartitions(input: AssignmentInput): AssignmentPlan {
  const { now } = input;
  const live = input.workers.filter((w) => w.expiresAt > now);
  const receivers = live.filter((w) => !w.draining).sort(byAge);
  const byId = new Map(input.workers.map((w) => [w.workerId, w]));
  const assignedTo = assigneesOf(live);
  if (receivers.length === 0) {
    // Nobody to give anything to: every live (draining) worker keeps what it has.
    const kept = new Map(live.map((w) => [w.workerId, [...(w.assignment ?? [])].sort(cmp)]));
    return { assignments: kept, changes: 0, deferred: 0 };
  }
  const receiverIds = new Set(receivers.map((w) => w.workerId));
  const placements = new Map<string, Placement>();
  for (const key of [...input.partitions].sort()) {
    placements.set(key, place(key, { input, byId, receivers, receiverIds, assignedTo }));
  }
  const desired = balance(placements, receivers, input.leases, now);
  return capped(placements, desired, live, input.maxChanges);
}

interface PlaceContext {
  readonly input: AssignmentInput;
  readonly byId: ReadonlyMap<string, WorkerRecord>;
  readonly receivers: readonly WorkerRecord[];
  readonly receiverIds: ReadonlySet<string>;
  readonly assignedTo: ReadonlyMap<string, string>;
}

/**
 * Where a partition stands: kept, pinned to a draining worker, owed to a successor, or free. A
 * worker with the partition in its backoff can do none of these (it would not take it): free.
 */
function place(key: string, ctx: PlaceContext): Placement {
  const { input, byId, receivers, receiverIds, assignedTo } = ctx;
  const may = (w: WorkerRecord | undefined) => w !== undefined && !inBackoff(w, key, input.now);
  const lease = input.leases.get(key);
  const holder =
    lease !== undefined && lease.owner !== null && lease.expiresAt > input.now ? lease.owner : null;
  const assignee = assignedTo.get(key) ?? null;
  // A live holder the lease was not asked of keeps it: whoever it was assigned to (a worker that
  // was presumed dead, or lost a claim race) would only cost a handoff. A move under way (the
  // lease asked for by its assignee) stays the assignee's, or the leader would undo its moves.
  const moving = assignee !== null && lease?.handoffTo === assignee;
  const candidates = (moving ? [assignee, holder] : [holder, assignee]).filter(
    (c): c is string => c !== null,
  );
  for (const id of candidates)
    if (receiverIds.has(id) && may(byId.get(id))) return { current: id, successor: null, pinned: null };
  for (const id of candidates) {
    const worker = byId.get(id);
    if (worker === undefined) continue;
    const successor = newestOfSlot(receivers, worker, may);
    if (successor !== null) return { current: null, successor, pinned: null };
    const live = worker.expiresAt > input.now;
    if (live && may(worker) && worker.draining && input.now < worker.deadline - input.drainLeadMs)
      return { current: null, successor: null, pinned: id };
  }
  return { current: null, successor: null, pinned: null };
}

/** The newest receiver of `worker`'s slot that started after it (and `may` have it), or null. */
function newestOfSlot(
  receivers: readonly WorkerRecord[],
  worker: WorkerRecord,
  may: (w: WorkerRecord) => boolean,
): string | null {
  let best: WorkerRecord | null = null;
  for (const r of receivers) {
    if (r.slot !== worker.slot || r.workerId === worker.workerId || r.startedAt < worker.startedAt) continue;
    if (!may(r)) continue;
    if (best === null || r.startedAt > best.startedAt) best = r;
  }
  return best?.workerId ?? null;
}

/**
 * The balanced, sticky target, ignoring the cap: quotas floor/ceil(N / W), the ceil ones going to
 * the workers that have most already; each keeps up to its quota of what it has (held leases
 * first), and the rest goes to those below quota, a slot's partitions to its successor first.
 */
function balance(
  placements: ReadonlyMap<string, Placement>,
  receivers: readonly WorkerRecord[],
  leases: ReadonlyMap<string, Lease>,
  now: number,
): Map<string, string> {
  const wants = new Map<string, string[]>(receivers.map((w) => [w.workerId, []]));
  const pool: string[] = [];
  let total = 0;
  for (const [key, p] of placements) {
    if (p.pinned !== null) continue;
    total++;
    const to = p.current ?? p.successor;
    if (to === null) pool.push(key);
    else wants.get(to)?.push(key);
  }
  const base = Math.floor(total / receivers.length);
  const extra = total % receivers.length;
  const size = (id: string) => wants.get(id)?.length ?? 0;
  const order = [...receivers].sort((a, b) => size(b.workerId) - size(a.workerId) || byAge(a, b));
  const quota = new Map(order.map((w, i) => [w.workerId, base + (i < extra ? 1 : 0)]));
  const desired = new Map<string, string>();
  const counts = new Map<string, number>();
  for (const [id, keys] of wants) {
    // Held by it first: trimming a worker should not cost a handoff it can avoid.
    keys.sort((a, b) => heldRank(leases, a, id) - heldRank(leases, b, id) || cmp(a, b));
    const q = quota.get(id) ?? 0;
    for (const key of keys.slice(0, q)) desired.set(key, id);
    counts.set(id, Math.min(q, keys.length));
    pool.push(...keys.slice(q));
  }
  const open = (w: WorkerRecord) => (counts.get(w.workerId) ?? 0) < (quota.get(w.workerId) ?? 0);
  const below = order.filter(open);
  let i = 0;
  for (const key of pool.sort(cmp)) {
    for (; i < below.length; i++) {
      const w = below[i];
      if (w !== undefined && open(w)) break;
    }
    const first = below[i];
    const to =
      first !== undefined && !inBackoff(first, key, now)
        ? first
        : (below.slice(i + 1).find((w) => open(w) && !inBackoff(w, key, now)) ??
          leastLoaded(receivers, counts, key, now));
    // Every receiver has it in its backoff: nobody until the first backoff ends.
    if (to === undefined) continue;
    desired.set(key, to.workerId);
    counts.set(to.workerId, (counts.get(to.workerId) ?? 0) + 1);
  }
  return desired;
}

/** A partition someone else failed, when every receiver below quota failed it: the one with fewest. */
function leastLoaded(
  receivers: readonly WorkerRecord[],
  counts: ReadonlyMap<string, number>,
  key: string,
  now: number,
): WorkerRecord | undefined {
  let best: WorkerRecord | undefined;
  for (const w of receivers) {
    if (inBackoff(w, key, now)) continue;
    if (best === undefined || (counts.get(w.workerId) ?? 0) < (counts.get(best.workerId) ?? 0)) best = w;
  }
  return best;
}

/** `w` failed the partition `key` lately and will not take it before its backoff ends. */
function inBackoff(w: WorkerRecord, key: string, now: number): boolean {
  return (w.backoff?.get(key) ?? 0) > now;
}

/** Applies at most `max` of the changes the balanced target wants; the rest wait a round. */
function capped(
  placements: ReadonlyMap<string, Placement>,
  desired: ReadonlyMap<string, string>,
  live: readonly WorkerRecord[],
  max: number,
): AssignmentPlan {
  const out = new Map<string, string[]>(live.map((w) => [w.workerId, []]));
  // Free partitions first (nobody copies them), then a slot's successor, then balancing moves.
  const rank = (p: Placement) =>
    p.current === null && p.successor === null ? 0 : p.successor !== null ? 1 : 2;
  const changes: { key: string; to: string; rank: number }[] = [];
  for (const [key, p] of placements) {
    const to = desired.get(key) ?? p.pinned;
    const from = p.current ?? p.pinned;
    if (to === null || to === undefined) continue;
    if (to === from) out.get(to)?.push(key);
    else changes.push({ key, to, rank: rank(p) });
  }
  changes.sort((a, b) => a.rank - b.rank || cmp(a.key, b.key));
  const applied = changes.slice(0, Math.max(0, max));
  for (const c of applied) out.get(c.to)?.push(c.key);
  for (const c of changes.slice(applied.length)) {
    // Deferred: a kept partition stays where it is; a free one stays unassigned.
    const from = placements.get(c.key)?.current ?? null;
    if (from !== null) out.get(from)?.push(c.key);
  }
  for (const keys of out.values()) keys.sort(cmp);
  return { assignments: out, changes: applied.length, deferred: changes.length - applied.length };
}

/** Which worker each partition is assigned to now (the first live worker listing it). */
function assigneesOf(live: readonly WorkerRecord[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const w of [...live].sort(byAge))
    for (const key of w.assignment ?? []) if (!out.has(key)) out.set(key, w.workerId);
  return out;
}

function heldRank(leases: ReadonlyMap<string, Lease>, key: string, worker: string): number {
  return leases.get(key)?.owner === worker ? 0 : 1;
}

function byAge(a: WorkerRecord, b: WorkerRecord): number {
  return a.startedAt - b.startedAt || cmp(a.workerId, b.workerId);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
