/**
 * The leader's part of the lease protocol (KCL 3.x's leader-assigns): one worker holds the
 * `#leader` item, a lease taken and renewed by conditional write, and once per round reads the
 * whole table (one paginated, eventually consistent scan), computes a balanced, sticky, capped
 * assignment (lease-assignment.ts) and writes each worker's assignment into that worker's item,
 * only when it changed. Nothing the leader writes decides ownership: a worker still takes a
 * lease only by the lease item's own conditional claim or handover, so a stale or second leader
 * can at worst publish a wish that those writes refuse.
 */
import { describeError } from "../../errors.js";
import type { Clock, LeaderLease, Lease, LeaseStore, Logger, WorkerRecord } from "../ports.js";
import { assignPartitions } from "./lease-assignment.js";

/** A worker item expired this long is deleted by the leader (kept before that for its slot). */
export const WORKER_ITEM_GC_MS = 15 * 60_000;
/** Assignment writes (and deletes) the leader has in flight at once. */
const WRITE_CONCURRENCY = 16;

export interface LeaderOptions {
  readonly store: LeaseStore;
  readonly workerId: string;
  /** How long the leader item holds without renewal. */
  readonly ttlMs: number;
  /** AssignmentInput.maxChanges */
  readonly maxChangesPerRound: number;
  /** AssignmentInput.drainLeadMs */
  readonly drainLeadMs: number;
  readonly logger?: Logger | undefined;
  /** WorkerOptions.formerSelf: its leader item is taken at once, its heartbeat counts as gone. */
  readonly formerSelf?: ((owner: string) => boolean) | undefined;
  /** Read again after the scan: a round frozen in it must not write on a leadership it lost. */
  readonly clock: Pick<Clock, "now">;
}

export interface LeaderRound {
  /** This worker's new assignment. */
  readonly mine: readonly string[];
  /** Changes the cap left for later rounds (a `stopWhenCaughtUp` leader is not done yet). */
  readonly deferred: number;
  readonly liveWorkers: number;
}

export class LeaderRole {
  readonly #o: LeaderOptions;
  #held: LeaderLease | null = null;

  constructor(options: LeaderOptions) {
    this.#o = options;
  }

  /** Renews the leader item if ours, takes it if absent or expired; true when we lead this round. */
  async step(now: number): Promise<boolean> {
    const { store, workerId, ttlMs } = this.#o;
    const held = this.#held;
    if (held !== null && held.expiresAt > now) {
      this.#held = await store.claimLeader(held, workerId, now + ttlMs);
      if (this.#held !== null) return true;
    }
    // Eventually consistent is enough: the claim below is conditional on what we saw.
    const observed = await store.leader();
    // Ours still (a renewal that landed but whose answer was lost): renew it, conditionally as
    // ever, rather than wait for it to expire with nobody assigning. Worker ids are per run.
    const ours = observed?.owner === workerId;
    const former = observed?.owner != null && this.#o.formerSelf?.(observed.owner) === true;
    if (observed !== null && observed.owner !== null && observed.expiresAt > now && !ours && !former) {
      this.#held = null;
      return false;
    }
    this.#held = await store.claimLeader(observed, workerId, now + ttlMs);
    if (this.#held !== null && !ours) this.#o.logger?.info("took lease leadership", { workerId });
    return this.#held !== null;
  }

  /** Gives the leader item up at the end of a run, so the next leader need not wait for it to expire. */
  async resign(): Promise<void> {
    const held = this.#held;
    this.#held = null;
    if (held === null) return;
    try {
      await this.#o.store.claimLeader(held, this.#o.workerId, 0);
    } catch (error) {
      this.#o.logger?.warn("giving up lease leadership failed; it will expire", describeError(error));
    }
  }

  /**
   * One leader round: scan, assign, publish the assignments that changed. `me` is our own item as
   * the heartbeat just returned it (the scan, not being consistent, may miss it). Null when the
   * round wrote nothing, having outlived its leader item or our heartbeat.
   */
  async assign(
    now: number,
    me: WorkerRecord,
    relevant: (key: string) => boolean,
  ): Promise<LeaderRound | null> {
    const { store, maxChangesPerRound, drainLeadMs } = this.#o;
    const snapshot = await store.scan();
    // Past our leader item or heartbeat (a pause mid-round), another leader may be assigning,
    // and may have counted us gone: our writes would undo its, and ask its holders for us.
    const at = Math.max(now, this.#o.clock.now());
    const held = this.#held;
    if (held === null || at >= held.expiresAt || at >= me.expiresAt) return null;
    const leases = new Map<string, Lease>();
    for (const lease of snapshot.leases) {
      const key = `${lease.topic}:${lease.partition}`;
      if (relevant(key)) leases.set(key, lease);
    }
    // A former self is gone, whatever its last heartbeat says: its partitions go to its slot's
    // successor (us) now, not when that heartbeat expires.
    const gone = (w: WorkerRecord) => this.#o.formerSelf?.(w.workerId) === true;
    const others = snapshot.workers
      .filter((w) => w.workerId !== me.workerId)
      .map((w) => (gone(w) ? { ...w, expiresAt: Math.min(w.expiresAt, at) } : w));
    const workers = [...others, me];
    const plan = assignPartitions({
      partitions: [...leases.keys()],
      leases,
      workers,
      now: at,
      maxChanges: maxChangesPerRound,
      drainLeadMs,
    });
    const mine = plan.assignments.get(me.workerId) ?? [];
    // Each write runs only while our items hold: a throttled table can stretch a long list past
    // them, and another leader's round may be writing by then.
    const holding = () => {
      const t = this.#o.clock.now();
      return t < held.expiresAt && t < me.expiresAt;
    };
    await publish(workers, plan.assignments, leases, at, store, holding);
    return { mine, deferred: plan.deferred, liveWorkers: plan.assignments.size };
  }
}

/**
 * Writes the assignments that changed (and deletes long-dead worker items), then the handoff
 * requests of the workers whose assignment landed; each write only while `holding()`. The first
 * failure is thrown once all are settled.
 */
async function publish(
  workers: readonly WorkerRecord[],
  assignments: ReadonlyMap<string, readonly string[]>,
  leases: ReadonlyMap<string, Lease>,
  at: number,
  store: LeaseStore,
  holding: () => boolean,
): Promise<void> {
  const whileHolding = (write: () => Promise<unknown>) => async () => (holding() ? write() : undefined);
  const assigned = new Set<string>();
  const writes: (() => Promise<unknown>)[] = [];
  const requests = new Map<string, (() => Promise<unknown>)[]>();
  for (const w of workers) {
    const next = assignments.get(w.workerId);
    if (next !== undefined && !sameKeys(w.assignment, next)) {
      writes.push(
        whileHolding(async () => {
          if (await store.assign(w.workerId, next)) assigned.add(w.workerId);
        }),
      );
      requests.set(w.workerId, handoffRequests(w, next, leases, at, store));
    }
    if (w.expiresAt + WORKER_ITEM_GC_MS <= at) writes.push(whileHolding(() => store.removeWorker(w)));
  }
  // Requests only for workers whose assignment landed: a holder hands a lease to the asker,
  // which pumps only what its assignment names, so the lease would idle until the next round.
  let failure: { error: unknown } | null = null;
  await inParallel(writes, WRITE_CONCURRENCY).catch((error: unknown) => {
    failure = { error };
  });
  const asked = [...requests].flatMap(([id, ws]) => (assigned.has(id) ? ws : []));
  await inParallel(asked.map(whileHolding), WRITE_CONCURRENCY);
  if (failure !== null) throw (failure as { error: unknown }).error;
}

/**
 * The leader asks the holders of partitions it moved to `w` to hand them over to `w` now, a
 * round before `w` itself would. Only a request (conditional on the holding the scan saw), so a
 * stale scan costs a refused write; the move itself is still the holder's fenced handover.
 */
function handoffRequests(
  w: WorkerRecord,
  next: readonly string[],
  leases: ReadonlyMap<string, Lease>,
  now: number,
  store: LeaseStore,
): (() => Promise<unknown>)[] {
  const before = new Set(w.assignment ?? []);
  const out: (() => Promise<unknown>)[] = [];
  for (const key of next) {
    const lease = leases.get(key);
    if (before.has(key) || lease === undefined || lease.owner === null || lease.owner === w.workerId)
      continue;
    if (lease.expiresAt <= now || lease.handoffTo !== null) continue;
    out.push(() => store.requestHandoff(lease, w.workerId));
  }
  return out;
}

function sameKeys(a: readonly string[] | null, b: readonly string[]): boolean {
  if (a === null || a.length !== b.length) return false;
  const set = new Set(a);
  return b.every((k) => set.has(k));
}

/** Runs `tasks` with at most `limit` at once; the first failure is thrown once all have settled. */
export async function inParallel(tasks: readonly (() => Promise<unknown>)[], limit: number): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | null = null;
  const lane = async () => {
    while (next < tasks.length) {
      const task = tasks[next++];
      try {
        await task?.();
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, lane));
  if (failure !== null) throw (failure as { error: unknown }).error;
}
