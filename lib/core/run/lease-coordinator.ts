/**
 * A worker's part of the lease protocol (KCL 3.x's leader-assigns, see README "Lease protocol").
 * Every round a worker writes its heartbeat (which returns its own item, with the assignment the
 * leader published there), takes a turn as leader if the leader item is free (lease-leader.ts),
 * and for each partition assigned to it that it does not hold yet reads that one lease
 * consistently and claims it when free or expired, or asks its holder to hand it over. Leases it
 * asked for are polled one GetItem each, fast, until they arrive. Between rounds a worker reads
 * its own item once a second (eventually consistent): the leader asks a holder to hand a moved
 * partition over at once, and the taker must not learn of it only at its next round, with the
 * partition handed over and nobody copying it. No worker but the leader reads the whole table,
 * and the leader reads it once per round.
 *
 * Safety does not rest on any of this: ownership changes only by the lease item's conditional
 * claim and handover (LeaseStore), and a pump starts only on a lease this worker's own write
 * returned or a consistent read showed it holds.
 */
import { describeError } from "../../errors.js";
import { parseKey, partitionKey, type TopicPartition } from "../model.js";
import type { Clock, Lease, LeaseStore, Logger, WorkerRecord } from "../ports.js";
import { type LeaveScope, passOn, withdrawRequests } from "./lease-handoffs.js";
import { inParallel, LeaderRole } from "./lease-leader.js";
import type { ClaimDecision, PollResult, RebalanceResult, RebalanceScope } from "./lease-round-model.js";
import { heartbeatTtlMs, isExpired, leaseExpiry } from "./lease-timing.js";
import type { LeaseHeldElsewhere } from "./lease-wait.js";

export { heartbeatTtlMs, isExpired, leaseExpiry };

/** The default of WorkerSettings.leases.maxClaimsPerRound: 5,000 partitions settle in five rounds. */
export const DEFAULT_MAX_CLAIMS_PER_ROUND = 1_000;
/** How often a lease asked for is looked at while its holder is expected to hand it over. */
export const AWAIT_POLL_MS = 250;
/** Once a handover is overdue (the holder may be dead), look this often, and at its expiry. */
const AWAIT_SLOW_POLL_MS = 1_000;
/** Lease reads and claims a worker has in flight at once. */
const CLAIM_CONCURRENCY = 16;
/** How often a worker reads its own item between rounds, for partitions the leader moved to it. */
export const ASSIGNMENT_POLL_MS = 1_000;

export interface LeaseCoordinatorOptions {
  readonly store: LeaseStore;
  readonly workerId: string;
  /** WorkerOptions.slot; the worker id when none is given. */
  readonly slot: string;
  readonly startedAt: number;
  readonly durationMs: number;
  readonly renewIntervalMs: number;
  readonly rebalanceIntervalMs: number;
  readonly maxClaimsPerRound: number;
  /** A draining worker without a successor keeps its partitions until this long before its deadline. */
  readonly drainLeadMs: number;
  /** WorkerSettings.writeSafetyMarginMs: an asker takes nothing this close to its deadline. */
  readonly writeSafetyMarginMs?: number | undefined;
  /** Read again before a round acts on its assignment: a pause mid-round makes its `now` stale. */
  readonly clock: Pick<Clock, "now">;
  readonly logger?: Logger | undefined;
  /** WorkerOptions.formerSelf: owners whose leases (and leader item) are taken back at once. */
  readonly formerSelf?: ((owner: string) => boolean) | undefined;
}

interface TakeAll extends PollResult {
  readonly missed: number;
}

interface Awaited {
  readonly tp: TopicPartition;
  readonly fastUntil: number;
  nextPollAt: number;
  holder: { readonly owner: string; readonly expiresAt: number }; // as last read
}

export class LeaseCoordinator {
  readonly #o: LeaseCoordinatorOptions;
  readonly #leader: LeaderRole;
  readonly #awaited = new Map<string, Awaited>();
  #assignment: readonly string[] | null = null;
  /** The last round's RebalanceScope.relevant, for `leave`. */
  #relevant: (key: string) => boolean = () => true;
  /** Our last heartbeat's expiry; null before the first, and after one that may have come too late. */
  #beatExpiresAt: number | null = null;
  /** When to read our item for a changed assignment next; null while draining or before a round. */
  #checkAt: number | null = null;

  constructor(options: LeaseCoordinatorOptions) {
    this.#o = options;
    this.#leader = new LeaderRole({
      store: options.store,
      workerId: options.workerId,
      ttlMs: heartbeatTtlMs(options),
      maxChangesPerRound: options.maxClaimsPerRound,
      drainLeadMs: options.drainLeadMs,
      logger: options.logger,
      formerSelf: options.formerSelf,
      clock: options.clock,
    });
  }

  /** Leases asked for and not handed over by a live holder's next renewal: likely its holder is gone. */
  overdue(now: number): LeaseHeldElsewhere[] {
    return [...this.#awaited.entries()]
      .filter(([, a]) => now >= a.fastUntil)
      .map(([key, a]) => ({ key, ...a.holder }));
  }

  /** Whether a lease we asked for may still be handed to us. */
  get awaiting(): boolean {
    return this.#awaited.size > 0;
  }

  /**
   * Earliest instant `poll` has something to do: a lease asked for to look at again, or (unless
   * draining) our assignment to read. Null when neither: a draining run may end.
   */
  get nextPollAt(): number | null {
    let at = this.#checkAt;
    for (const a of this.#awaited.values()) at = at === null ? a.nextPollAt : Math.min(at, a.nextPollAt);
    return at;
  }

  /**
   * One round. A lost claim race is normal (someone else got the lease). A failed leader turn is
   * logged and the worker goes on with the assignment it has; a failed heartbeat propagates so
   * the caller logs it and tries again next round, its held leases unaffected.
   */
  async rebalance(now: number, hardDeadline: number, scope: RebalanceScope = {}): Promise<RebalanceResult> {
    const relevant = scope.relevant ?? (() => true);
    this.#relevant = relevant;
    const draining = scope.draining ?? false;
    const beat = this.#beat(now, hardDeadline, draining, scope.backoff);
    const previous = this.#beatExpiresAt;
    const presumedDead = previous === null || this.#now(now) >= previous;
    const me = await this.#o.store.heartbeat(beat, { forgetAssignment: presumedDead });
    // Frozen in that write past the previous heartbeat, it may have landed after the leader
    // counted us gone, keeping an assignment that is no longer ours: not alive until the next.
    const lapsed = previous !== null && !presumedDead && this.#o.clock.now() >= previous;
    this.#beatExpiresAt = lapsed ? null : beat.expiresAt;
    this.#assignment = me.assignment;
    if (presumedDead && this.#awaited.size > 0) {
      // What we asked for while alive is the leader's to give elsewhere now, as our assignment is.
      const asked = [...this.#awaited.keys()];
      this.#awaited.clear();
      await withdrawRequests({ ...this.#o, concurrency: CLAIM_CONCURRENCY, late: () => false }, asked);
    }
    let leader = false;
    let deferred = 0;
    let liveWorkers = 0;
    try {
      leader = await this.#leader.step(now);
      if (leader) {
        const round = await this.#leader.assign(now, me, relevant);
        if (round !== null) {
          this.#assignment = round.mine;
          ({ deferred, liveWorkers } = round);
        }
      }
    } catch (error) {
      this.#o.logger?.warn("lease leader round failed", describeError(error));
    }
    this.#checkAt = draining ? null : now + ASSIGNMENT_POLL_MS;
    const assignment = (this.#assignment ?? []).filter(relevant);
    const { acquired, requested, missed } = await this.#takeAll(
      draining ? [] : this.#wanted(assignment, scope, now),
      now,
      hardDeadline,
    );
    const decision: ClaimDecision = {
      assigned: this.#assignment !== null,
      leader,
      target: assignment.length,
      liveWorkers,
      available: missed + deferred,
      awaiting: this.#awaited.size,
    };
    return { acquired, requested, decision };
  }

  /**
   * Between rounds: looks at the leases asked for whose poll is due, and once a second (unless
   * draining) reads our item and takes what the leader newly assigned us as a round would.
   */
  async poll(now: number, hardDeadline: number, scope: RebalanceScope = {}): Promise<PollResult> {
    const acquired = await this.#pollAwaited(now, hardDeadline);
    if (scope.draining === true) this.#checkAt = null;
    if (this.#checkAt === null || now < this.#checkAt) return { acquired, requested: [] };
    this.#checkAt = now + ASSIGNMENT_POLL_MS;
    // Asks nobody: the leader asked the holder of what it moved, and an eventually consistent
    // read may be older than the leader's last change; asking on it would pull a partition back.
    const added = await this.#newlyAssigned(now, scope);
    const taken = await this.#takeAll(added, now, hardDeadline, false);
    return { acquired: [...acquired, ...taken.acquired], requested: taken.requested };
  }

  /**
   * Assigned keys to take: not excluded by the caller, not awaited already, not in a backoff.
   * The backoff is kept here, not by the leader, whose view lags: W fails P and releases it; the
   * leader may scan W's item before the heartbeat that publishes P's backoff (or W read the
   * assignment written before it), so P is still W's and only W's refusal keeps W off it. The
   * round after, the leader moves P to X, who claims it as any free lease (conditionally, on
   * the lease as read): nothing here makes two workers copy P. Should the release not land, X
   * asks W, W (no pump on P) never hands over, and X claims P at expiry: the old worst case.
   */
  #wanted(assignment: readonly string[], scope: RebalanceScope, now: number): string[] {
    const exclude = scope.exclude ?? new Set<string>();
    const backoff = scope.backoff ?? new Map<string, number>();
    return assignment.filter(
      (key) => !exclude.has(key) && !this.#awaited.has(key) && (backoff.get(key) ?? 0) <= now,
    );
  }

  /**
   * Keys our item lists that the assignment we knew did not: none while presumed dead, and none
   * from a read older than our last heartbeat (its expiry is earlier), which may list what the
   * leader has since moved away, or what a heartbeat after a freeze forgot.
   */
  async #newlyAssigned(now: number, scope: RebalanceScope): Promise<string[]> {
    let item: WorkerRecord | null;
    try {
      item = await this.#o.store.worker(this.#o.workerId);
    } catch (error) {
      this.#o.logger?.warn("reading our assignment failed", describeError(error));
      return [];
    }
    // Presumed dead, the next heartbeat forgets the assignment: nothing to chase before it.
    const beat = this.#beatExpiresAt;
    if (beat === null || now >= beat || item === null || item.assignment === null) return [];
    if (item.expiresAt < beat) return [];
    const known = new Set(this.#assignment ?? []);
    this.#assignment = item.assignment;
    const relevant = scope.relevant ?? (() => true);
    return this.#wanted(
      item.assignment.filter((key) => !known.has(key) && relevant(key)),
      scope,
      now,
    );
  }

  /** Reads and takes (claims, or with `ask` asks for) each of `wanted`, up to the round's cap. */
  async #takeAll(wanted: readonly string[], now: number, hardDeadline: number, ask = true): Promise<TakeAll> {
    const acquired: Lease[] = [];
    const requested: Lease[] = [];
    const expiresAt = leaseExpiry(now, this.#o.durationMs, hardDeadline);
    const tries = wanted.slice(0, this.#o.maxClaimsPerRound);
    let missed = wanted.length - tries.length;
    await inParallel(
      tries.map((key) => async () => {
        const outcome = await this.#take(parseKey(key), now, expiresAt, ask).catch((error: unknown) => {
          // One lease's failure must not hide the leases the others took.
          this.#o.logger?.warn("taking an assigned lease failed", { key, ...describeError(error) });
          return { kind: "missed" } as const;
        });
        if (outcome.kind === "acquired") acquired.push(outcome.lease);
        else if (outcome.kind === "requested") requested.push(outcome.lease);
        else if (outcome.kind === "missed") missed++;
      }),
      CLAIM_CONCURRENCY,
    );
    return { acquired, requested, missed };
  }

  /**
   * Looks at the leases asked for whose poll is due (one consistent GetItem each): returns those
   * handed over to us, claims one that expired meanwhile (its holder died), and forgets one that
   * went elsewhere (the next round asks again if it is still ours to have).
   */
  async #pollAwaited(now: number, hardDeadline: number): Promise<Lease[]> {
    const due = [...this.#awaited.entries()].filter(([, a]) => a.nextPollAt <= now);
    const acquired: Lease[] = [];
    const expiresAt = leaseExpiry(now, this.#o.durationMs, hardDeadline);
    await inParallel(
      due.map(([key, a]) => async () => {
        try {
          const lease = await this.#o.store.lease(a.tp);
          if (!this.#alive(now)) {
            // Handed to us meanwhile: nothing of ours pumps an awaited lease, and until a
            // heartbeat of ours lands nothing may start, so give it back for the leader to place.
            if (lease !== null && lease.owner === this.#o.workerId) {
              await this.#o.store.release(lease);
              this.#awaited.delete(key);
              return;
            }
            a.nextPollAt = now + AWAIT_POLL_MS; // the next heartbeat withdraws the request
            return;
          }
          const mine = lease === null ? null : await this.#ours(lease, now, expiresAt);
          if (mine !== null) acquired.push(mine);
          if (lease !== null && mine === null) await passOn(this.#o, lease, this.#now(now));
          const stillAsked = lease !== null && mine === null && lease.handoffTo === this.#o.workerId;
          if (stillAsked && !isExpired(lease, now)) {
            a.nextPollAt =
              now < a.fastUntil ? now + AWAIT_POLL_MS : Math.min(now + AWAIT_SLOW_POLL_MS, lease.expiresAt);
            a.holder = { owner: lease.owner ?? "", expiresAt: lease.expiresAt };
            return;
          }
          this.#awaited.delete(key);
        } catch (error) {
          // One lease's failure must not hide the others'; this one is looked at again later.
          this.#o.logger?.warn("looking at an awaited lease failed", { key, ...describeError(error) });
          a.nextPollAt = now + AWAIT_SLOW_POLL_MS;
        }
      }),
      CLAIM_CONCURRENCY,
    );
    return acquired;
  }

  /**
   * The end of a run: the heartbeat says we are gone (expired, draining), so the leader moves
   * our partitions at once, and the leader item is given up if we held it. Then the requests
   * standing for us are withdrawn (lease-handoffs.ts): on the leases we asked for, then those the
   * leader assigned us (it asks on our behalf), but for `scope.released`, which this run held.
   */
  async leave(now: number, scope: LeaveScope = {}): Promise<void> {
    const { released = new Set(), late = () => false } = scope;
    const asked = [...this.#awaited.keys()];
    this.#awaited.clear();
    this.#checkAt = null;
    await this.#leader.resign();
    let me: WorkerRecord | null = null;
    try {
      me = await this.#o.store.heartbeat({ ...this.#beat(now, now, true), expiresAt: now });
    } catch (error) {
      this.#o.logger?.warn("final heartbeat failed; the worker item will expire", describeError(error));
    }
    const others = (me?.assignment ?? this.#assignment ?? []).filter((key) => !released.has(key));
    // Those outside our plan last: the leader may have asked for one our plan has not found yet.
    const keys = [...asked, ...others.filter(this.#relevant), ...others.filter((k) => !this.#relevant(k))];
    await withdrawRequests({ ...this.#o, concurrency: CLAIM_CONCURRENCY, late }, keys);
  }

  /**
   * Whether the heartbeat that returned our assignment still holds: the leader counts us in only
   * until it expires and may then give our partitions to others, so past it, a round frozen after
   * its heartbeat (a GC pause, a stopped process) must not claim, resume or ask for any of them.
   */
  #alive(now: number): boolean {
    return this.#beatExpiresAt !== null && this.#now(now) < this.#beatExpiresAt;
  }

  /** The later of a round's `now` and the clock: a pause only ever makes `now` too early. */
  #now(now: number): number {
    return Math.max(now, this.#o.clock.now());
  }

  #beat(now: number, hardDeadline: number, draining: boolean, backoff?: ReadonlyMap<string, number>) {
    const { workerId, slot, startedAt } = this.#o;
    return {
      workerId,
      slot,
      startedAt,
      draining,
      deadline: hardDeadline,
      expiresAt: now + heartbeatTtlMs(this.#o),
      ...(backoff === undefined || backoff.size === 0 ? {} : { backoff }),
    };
  }

  /** Reads one assigned lease consistently and acts on it; without `ask`, waits only for a handoff asked already. */
  async #take(tp: TopicPartition, now: number, expiresAt: number, ask: boolean): Promise<TakeOutcome> {
    const { store, workerId, renewIntervalMs } = this.#o;
    const lease = await store.lease(tp);
    if (lease === null || !this.#alive(now)) return { kind: "missed" };
    const at = this.#now(now);
    const mine = await this.#ours(lease, at, expiresAt);
    if (mine !== null) return { kind: "acquired", lease: mine };
    if (lease.owner === workerId) {
      // Ours, asked for by another worker, and no pump of ours on it to see that: pass it on.
      await passOn(this.#o, lease, at);
      return { kind: "busy" };
    }
    if (isExpired(lease, at)) return { kind: "missed" }; // the claim lost a race
    const asked =
      lease.handoffTo === workerId ||
      (ask && lease.handoffTo === null && (await store.requestHandoff(lease, workerId)));
    if (!asked) return { kind: "busy" };
    // The holder hands over at its next renewal or checkpoint: look fast until then.
    const fastUntil = now + renewIntervalMs + 2 * AWAIT_POLL_MS;
    const holder = { owner: lease.owner ?? "", expiresAt: lease.expiresAt };
    this.#awaited.set(partitionKey(tp), { tp, fastUntil, nextPollAt: now + AWAIT_POLL_MS, holder });
    return { kind: "requested", lease };
  }

  /**
   * The lease as ours to pump, verified: our own claim's result, or a consistent read showing we
   * hold it unexpired and nobody asked for it. Null otherwise. A lease of a former self of this
   * worker is claimed unexpired; why that is safe: WorkerOptions.formerSelf.
   */
  async #ours(lease: Lease, now: number, expiresAt: number): Promise<Lease | null> {
    const { workerId, store, formerSelf } = this.#o;
    const at = this.#now(now);
    if (lease.owner === workerId && !isExpired(lease, at)) {
      return lease.handoffTo === null || lease.handoffTo === workerId ? lease : null;
    }
    const reclaim = lease.owner !== null && lease.owner !== workerId && formerSelf?.(lease.owner) === true;
    if (!isExpired(lease, at) && !reclaim) return null;
    return store.claim(lease, workerId, expiresAt);
  }
}

type TakeOutcome =
  | { readonly kind: "acquired" | "requested"; readonly lease: Lease }
  | { readonly kind: "missed" | "busy" };
