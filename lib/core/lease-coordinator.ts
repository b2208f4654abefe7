/**
 * Who takes which partition lease, modelled on the Kinesis Client Library's LeaseTaker: every
 * worker independently takes free and expired leases up to its fair share, and steals at most
 * one lease per round from the most loaded worker. No worker coordinates with another except
 * through the conditional writes of the LeaseStore.
 */
import { partitionKey } from "./model.js";
import type { Lease, LeaseStore } from "./ports.js";

export interface ClaimDecisionInput {
  readonly leases: readonly Lease[];
  readonly me: string;
  readonly now: number;
  /**
   * Partitions this worker must not take this round: ones still being wound down by a pump of
   * its own, or ones it stopped on a non-retryable error.
   */
  readonly exclude?: ReadonlySet<string>;
  /** Source of randomness for the candidate order; defaults to Math.random. */
  readonly random?: () => number;
}

export interface ClaimDecision {
  /** Free or expired leases to claim, already in random order. */
  readonly take: Lease[];
  /**
   * A live lease of the most loaded worker to ask for (a handoff request, not a takeover: the
   * holder finishes its batch and releases, so stealing copies nothing twice), or null.
   */
  readonly steal: Lease | null;
  /** The most leases any worker should hold: ceil(leases / live workers). */
  readonly target: number;
  /** Distinct owners of unexpired leases, plus me. */
  readonly liveWorkers: number;
  /** Unexpired leases I hold right now. */
  readonly held: number;
  /** Free or expired leases that exist, whether or not I take them (excluded ones not counted). */
  readonly available: number;
  /** Live leases of other workers that I asked for and that are not handed over yet. */
  readonly awaiting: number;
}

export function isExpired(lease: Lease, now: number): boolean {
  return lease.owner === null || lease.expiresAt <= now;
}

/**
 * The pure decision. Fair share is target = ceil(total / live workers), and a worker steals only
 * from a worker holding MORE than target. With 24 leases and 3 workers that settles at 8/8/8;
 * with 24 and 5 at 5/5/5/5/4, where the worker with 4 sees nobody above target and stays put,
 * so a balanced fleet never flaps. A newcomer holds nothing yet, so the others do not count it;
 * it counts itself, computes a lower target and steals one lease per round until the rest count
 * it too.
 */
export function decideClaims(input: ClaimDecisionInput): ClaimDecision {
  const { leases, me, now } = input;
  const exclude = input.exclude ?? new Set<string>();
  const random = input.random ?? Math.random;

  const counts = new Map<string, number>([[me, 0]]);
  const candidates: Lease[] = [];
  let awaiting = 0;
  // Leases someone already asked for are on their way: they count for the asker, not the holder,
  // so neither the asker nor anyone else asks for more than the imbalance.
  for (const lease of leases) {
    if (isExpired(lease, now)) {
      if (!exclude.has(partitionKey(lease))) candidates.push(lease);
    } else if (lease.owner !== null) {
      const holder = lease.handoffTo ?? lease.owner;
      counts.set(holder, (counts.get(holder) ?? 0) + 1);
      if (lease.handoffTo === me && lease.owner !== me) awaiting++;
    }
  }
  const liveWorkers = counts.size;
  const target = leases.length === 0 ? 0 : Math.ceil(leases.length / liveWorkers);
  const held = counts.get(me) ?? 0;
  const needed = Math.max(0, target - held);
  const base = { target, liveWorkers, held, available: candidates.length, awaiting };

  if (needed === 0) return { ...base, take: [], steal: null };
  if (candidates.length > 0)
    return { ...base, take: shuffle(candidates, random).slice(0, needed), steal: null };

  // Stealing from a worker at or below target would only move the imbalance to it.
  let mostLoaded: string[] = [];
  let most = target;
  for (const [owner, count] of counts) {
    if (owner === me) continue;
    if (count > most) {
      most = count;
      mostLoaded = [owner];
    } else if (count === most && count > target) {
      mostLoaded.push(owner);
    }
  }
  const victim = pick(mostLoaded, random);
  if (victim === undefined) return { ...base, take: [], steal: null };
  const theirs = leases.filter(
    (l) => l.owner === victim && l.handoffTo === null && !isExpired(l, now) && !exclude.has(partitionKey(l)),
  );
  return { ...base, take: [], steal: pick(theirs, random) ?? null };
}

/** "A lease never outlives its holder's hard deadline", so a stalled holder cannot write after losing it. */
export function leaseExpiry(now: number, durationMs: number, hardDeadline: number): number {
  return Math.min(now + durationMs, hardDeadline);
}

export interface LeaseCoordinatorOptions {
  readonly store: LeaseStore;
  readonly workerId: string;
  readonly durationMs: number;
  readonly random?: () => number;
}

export interface RebalanceScope {
  /** Leases not to take this round (see ClaimDecisionInput.exclude). */
  readonly exclude?: ReadonlySet<string>;
  /**
   * Which leases take part at all, e.g. only partitions this worker's plan routes. Leases left
   * in the table by topics no longer mirrored must not count toward anyone's fair share.
   */
  readonly relevant?: (lease: Lease) => boolean;
}

export interface RebalanceResult {
  /** Leases this worker now holds and was not working on: claimed, or handed over to it. */
  readonly acquired: Lease[];
  /** The lease whose holder this worker asked to hand it over, if the request landed. */
  readonly requested: Lease | null;
  readonly decision: ClaimDecision;
}

/** A round's decision as it stands once the round has acted on it. */
export function decisionAfter(round: RebalanceResult): ClaimDecision {
  const { acquired, requested, decision } = round;
  // The leases just claimed were counted as available when the decision was made; without
  // this a `stopWhenCaughtUp` run would wait a whole rebalance interval after catching up.
  const claimed = acquired.filter((l) =>
    decision.take.some((t) => partitionKey(t) === partitionKey(l)),
  ).length;
  // The decision counted the leases asked for before this round's request: the one just asked
  // for is awaited too, or a `stopWhenCaughtUp` run could leave right after asking, and the
  // holder would hand the lease to a worker that has gone.
  return {
    ...decision,
    available: decision.available - claimed,
    awaiting: decision.awaiting + (requested === null ? 0 : 1),
  };
}

/** The thin effectful part: read every lease, decide, claim. */
export class LeaseCoordinator {
  readonly #options: LeaseCoordinatorOptions;

  constructor(options: LeaseCoordinatorOptions) {
    this.#options = options;
  }

  /**
   * One round. Losing a claim race (null from the store) is normal: someone else got the lease.
   * Store failures propagate so the caller can log them and try again next round.
   */
  async rebalance(now: number, hardDeadline: number, scope: RebalanceScope = {}): Promise<RebalanceResult> {
    const { store, workerId, durationMs, random } = this.#options;
    const { exclude, relevant } = scope;
    const all = await store.list();
    const leases = relevant === undefined ? all : all.filter(relevant);
    const decision = decideClaims({
      leases,
      me: workerId,
      now,
      ...(exclude === undefined ? {} : { exclude }),
      ...(random === undefined ? {} : { random }),
    });
    const expiresAt = leaseExpiry(now, durationMs, hardDeadline);
    // Leases handed over to us (see LeaseStore.handOver) are ours already: adopt them. Not one
    // that another worker asked for: we are handing it over (our handover may still be on its
    // way), and a pump started on it would write alongside the taker's once it lands.
    const excluded = exclude ?? new Set<string>();
    const acquired: Lease[] = leases.filter(
      (l) =>
        l.owner === workerId &&
        (l.handoffTo === null || l.handoffTo === workerId) &&
        !isExpired(l, now) &&
        !excluded.has(partitionKey(l)),
    );
    for (const observed of decision.take) {
      const claimed = await store.claim(observed, workerId, expiresAt);
      if (claimed !== null) acquired.push(claimed);
    }
    const requested =
      decision.steal !== null && (await store.requestHandoff(decision.steal, workerId))
        ? decision.steal
        : null;
    return { acquired, requested, decision };
  }
}

function shuffle<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const a = out[i] as T;
    out[i] = out[j] as T;
    out[j] = a;
  }
  return out;
}

function pick<T>(items: readonly T[], random: () => number): T | undefined {
  return items.length === 0 ? undefined : items[Math.floor(random() * items.length)];
}
