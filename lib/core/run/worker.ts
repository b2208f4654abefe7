/**
 * One replication run of one worker (a Lambda invocation, a CLI round): plan topics, take the leases the
 * leader assigned it (lease-coordinator.ts), pump them until the deadline or drained, checkpoint, release.
 *
 * Safety rests on three rules, each enforced in one place:
 *  - a checkpoint moves only past records the target acknowledged (PartitionPump);
 *  - every lease expiry is min(now + duration, deadline) (leaseExpiry): a holder that stalls
 *    past its deadline no longer holds anything;
 *  - a write starts only if it can finish writeSafetyMarginMs before the lease expires, judged
 *    by this worker's own clock, which keeps a worker that cannot reach the lease store from
 *    writing after its leases may have passed to someone else.
 */
import { describeError, isReplicatorError } from "../../errors.js";
import { partitionKey } from "../model.js";
import { DEFAULT_CONFIG_SYNC } from "../plan/config-sync.js";
import type { PartitionRoute, TopicPlan } from "../plan/model.js";
import { planTopics } from "../plan/planner.js";
import type { Lease, TopicMapping } from "../ports.js";
import { HeldLease } from "../pump/held-lease.js";
import { PartitionPump, type PumpStatus } from "../pump/partition-pump.js";
import { ReadAheadBudget } from "../pump/read-ahead.js";
import { type BackoffPolicy, NO_JITTER, retryUntil } from "../retry.js";
import { EndedTerms } from "./ended-terms.js";
import { FailureBackoff } from "./failure-backoff.js";
import { FailureReport } from "./failure-report.js";
import { type LeaseCoordinator, leaseExpiry } from "./lease-coordinator.js";
import { leaseCoordinatorFor, loggedPoll, loggedRound } from "./lease-round.js";
import type { ClaimDecision, RebalanceScope } from "./lease-round-model.js";
import { LeaseWaitNotice } from "./lease-wait.js";
import { RunLeases } from "./run-leases.js";
import { type RunEndReason, type RunSummary, RunTally } from "./run-summary.js";
import { reportTopicError, TopicWatch } from "./topic-watch.js";
import { prepareTransactions } from "./transaction-timeout.js";
import {
  assertWorkerSettings,
  DEFAULT_READ_AHEAD_BYTES,
  type PumpPorts,
  pumpDeps,
  pumpSettings,
  type WorkerSettings,
} from "./worker-settings.js";

/** The pumps' ports (PumpPorts: targetReader is required when settings.provenance is set). */
export interface WorkerOptions extends PumpPorts {
  /** Unique per run: two concurrent runs never share one. */
  readonly workerId: string;
  /**
   * Stable across runs (a Lambda schedule slot, the CLI worker's id): the leader gives a slot's
   * partitions back to a live worker of the same slot. @default workerId
   */
  readonly slot?: string;
  /**
   * Owners that are earlier runs of this same worker, known dead (the CLI: the run before a
   * kill -9, on the same state; lib/cli/worker-identity.ts): their leases and leader item are
   * claimed at once, not after they expire. Safe because the claim is the ordinary one: conditional
   * on the item as read and bumping the counter, so every later renew, checkpoint or handover of the
   * old run (heldBy its owner and counter) is refused; with transactional fencing the first write
   * initialises the partition's transactional id (per partition, not per worker), which fences
   * the old producer on the target. Only ids of runs known dead may match. @default none
   */
  readonly formerSelf?: (owner: string) => boolean;
  readonly mapping: TopicMapping;
  readonly settings: WorkerSettings;
}

export interface ReplicateOptions {
  /** End as soon as every held partition is caught up and no lease is free (CLI `run --once`, tests). */
  readonly stopWhenCaughtUp?: boolean;
  readonly signal?: AbortSignal;
  /**
   * Epoch ms from which the run drains: its heartbeat says so, the leader assigns its partitions
   * to others (a newer run of the same slot first), it takes nothing new, and it ends ("drained")
   * as soon as it holds nothing. Its deadline still ends it regardless.
   */
  readonly drainAt?: number;
}

interface Term {
  readonly key: string;
  readonly held: HeldLease;
  readonly pump: PartitionPump;
  readonly done: Promise<PumpStatus>;
}

/** Lease-store and planning retries keep a steady pace: one attempt a second (no backoff, NO_JITTER). */
const STORE_RETRY_MS = 1000;
const STORE_RETRY: BackoffPolicy = { initialMs: STORE_RETRY_MS, maxMs: STORE_RETRY_MS };
const CAUGHT_UP_POLL_MS = 200;

export class Worker {
  readonly #o: WorkerOptions;

  constructor(options: WorkerOptions) {
    assertWorkerSettings(options.settings, { hasTargetReader: options.targetReader !== undefined });
    this.#o = options;
  }

  /**
   * Replicates until `deadline` (epoch ms). No lease this run takes expires after it and no
   * write is started that could end after it; releasing the leases happens just after it, so
   * callers leave a few seconds of their own time budget beyond `deadline`.
   */
  async replicate(deadline: number, options: ReplicateOptions = {}): Promise<RunSummary> {
    const run = new Run(this.#o, leaseCoordinatorFor(this.#o, this.#o.clock.now()), deadline, options);
    return run.execute();
  }
}

/** The state of one replicate() call. */
class Run {
  readonly #o: WorkerOptions;
  readonly #coordinator: LeaseCoordinator;
  readonly #deadline: number;
  readonly #options: ReplicateOptions;
  readonly #startedAt: number;
  readonly #routes = new Map<string, PartitionRoute>();
  readonly #active = new Map<string, Term>();
  readonly #readAhead: ReadAheadBudget;
  readonly #finished = new EndedTerms<Term>();
  /** Partitions stopped on a non-retryable error: given back, not taken again before their backoff. */
  readonly #backoff: FailureBackoff;
  readonly #report: FailureReport;
  #stopping = false;
  /** A pump ended short of its partition's end: look at the lease table before calling it done. */
  #needsLook = false;
  readonly #tally = new RunTally();
  readonly #leases: RunLeases;
  readonly #watch: TopicWatch; // re-plans every discovery interval: new topics join the run
  #lastDecision: ClaimDecision | null = null;
  readonly #waitNotice: LeaseWaitNotice;
  #drainAnnounced = false;

  constructor(o: WorkerOptions, coordinator: LeaseCoordinator, deadline: number, options: ReplicateOptions) {
    this.#o = o;
    this.#coordinator = coordinator;
    this.#deadline = deadline;
    this.#options = options;
    this.#startedAt = o.clock.now();
    const { leases: l, writeSafetyMarginMs } = o.settings;
    this.#leases = new RunLeases({ ...o, store: o.leases, durationMs: l.durationMs, writeSafetyMarginMs });
    this.#readAhead = new ReadAheadBudget(o.settings.readAheadBytes ?? DEFAULT_READ_AHEAD_BYTES);
    this.#backoff = new FailureBackoff(o.settings.leases.durationMs);
    this.#report = new FailureReport(o.logger);
    this.#waitNotice = new LeaseWaitNotice(o.logger);
    this.#watch = new TopicWatch({
      plan: (signal) => this.#planTopics(deadline - o.settings.writeSafetyMarginMs, signal),
      ensure: (partitions) => o.leases.ensure(partitions),
      clock: o.clock,
      intervalMs: o.settings.discoveryIntervalMs,
      logger: o.logger,
      onTopicError: (problem) => reportTopicError(problem, this.#tally, o.metrics, o.logger),
    });
  }

  async execute(): Promise<RunSummary> {
    const { leases, logger, settings, workerId } = this.#o;
    // No write may start after this, so there is nothing left to do for a pump.
    const stopAt = this.#deadline - settings.writeSafetyMarginMs;
    logger.info("replication run starting", { workerId, deadline: this.#deadline });
    // Before any InitProducerId; a brokers' cap too short for the leases ends the run here.
    await prepareTransactions(this.#o);
    const plan = await this.#untilStop("planning topics failed", stopAt, () => this.#planTopics(stopAt));
    if (plan !== null) this.#adopt(this.#watch.adopt(plan));
    const partitions = [...this.#routes.values()].map((r) => r.source);
    const ensured =
      plan !== null &&
      (await this.#untilStop("creating lease items failed", stopAt, async () => {
        await leases.ensure(partitions);
        return true;
      })) !== null;
    let endReason: RunEndReason = this.#options.signal?.aborted ? "aborted" : "deadline";
    try {
      if (ensured) endReason = await this.#loop(stopAt);
    } finally {
      // Also when a lease round failed for good: pumps finish their batch and leases are freed.
      await this.#windDown();
    }
    const summary = this.#tally.summary({
      workerId,
      startedAt: this.#startedAt,
      endedAt: this.#o.clock.now(),
      endReason,
      emptySelection: this.#watch.emptySelection,
    });
    logger.info("replication run finished", {
      workerId,
      endReason,
      partitions: summary.partitions.length,
      records: summary.partitions.reduce((n, p) => n + p.records, 0),
      errors: summary.errors.length,
    });
    return summary;
  }

  /**
   * A cluster or the lease store may be briefly unreachable (broker restarting, metadata moving):
   * retry until there is no time left, then end the run with the error in its summary rather
   * than throwing, since the next run simply tries again. Non-retryable errors still throw.
   */
  async #untilStop<T>(failed: string, stopAt: number, attempt: () => Promise<T>): Promise<T | null> {
    try {
      return await retryUntil(attempt, {
        clock: this.#o.clock,
        retryable: (error) => isReplicatorError(error) && error.retryable,
        deadline: stopAt,
        signal: this.#options.signal,
        backoff: STORE_RETRY,
        random: NO_JITTER,
        onRetry: (error) => this.#o.logger.warn(`${failed}, retrying`, describeError(error)),
      });
    } catch (error) {
      if (!isReplicatorError(error) || !error.retryable) throw error;
      this.#tally.topicError("", error);
      return null;
    }
  }

  #planTopics(stopAt: number, signal = this.#options.signal): Promise<TopicPlan> {
    const { clock, logger } = this.#o;
    const onRetry = (what: string, error: unknown) =>
      logger.warn(`${what} failed, retrying`, describeError(error));
    return planTopics({
      sourceAdmin: this.#o.sourceAdmin,
      targetAdmin: this.#o.targetAdmin,
      mapping: this.#o.mapping,
      configSync: this.#o.settings.configSync ?? DEFAULT_CONFIG_SYNC,
      replicationFactor: this.#o.settings.replicationFactor,
      retry: { clock, deadline: stopAt, signal, backoff: STORE_RETRY, onRetry },
    });
  }

  /** Routes this run may take (topics left out were reported by the watch); true when there were any. */
  #adopt(routes: readonly PartitionRoute[]): boolean {
    for (const route of routes) this.#routes.set(partitionKey(route.source), route);
    return routes.length > 0;
  }

  /** Renews, rebalances and reaps finished pumps until the run has to end; says why it ended. */
  async #loop(stopAt: number): Promise<RunEndReason> {
    const { clock, settings } = this.#o;
    const { signal, stopWhenCaughtUp, drainAt } = this.#options;
    let nextRebalance = clock.now();
    let nextRenew = clock.now() + settings.leases.renewIntervalMs;
    for (;;) {
      if (signal?.aborted) return "aborted";
      const now = clock.now();
      if (now >= stopAt) return "deadline";
      if (now >= nextRenew) {
        const expiresAt = leaseExpiry(now, settings.leases.durationMs, this.#deadline);
        await this.#leases.renewAll(
          [...this.#active.values()].map((t) => t.held),
          expiresAt,
        );
        nextRenew = now + settings.leases.renewIntervalMs;
      }
      this.#watch.poll(now);
      // Partitions found by a discovery: a lease round at once, so they are taken without delay.
      const discovered = this.#adopt(this.#watch.take());
      // The heartbeat says "draining" from the first round after drainAt.
      const drainDue = drainAt !== undefined && now >= drainAt && !this.#drainAnnounced;
      if (now >= nextRebalance || drainDue || discovered) {
        this.#drainAnnounced ||= drainDue;
        await this.#rebalance(now);
        nextRebalance = now + settings.leases.rebalanceIntervalMs;
      }
      const pollAt = this.#coordinator.nextPollAt;
      if (pollAt !== null && pollAt <= clock.now()) await this.#poll(clock.now());
      // A failed partition's backoff goes out with a heartbeat at once: the leader moves it sooner.
      if (this.#reap()) nextRebalance = clock.now();
      // A partition stopped short of its end: find out at once whether to resume it.
      if (this.#needsLook) nextRebalance = Math.min(nextRebalance, now + CAUGHT_UP_POLL_MS);
      // Not while a lease asked for may still come: handed to a run gone, it would idle until expiry.
      if (
        this.#draining(now) &&
        this.#active.size === 0 &&
        this.#leases.givingBack.size === 0 &&
        !this.#coordinator.awaiting
      )
        return "drained";
      if (stopWhenCaughtUp && this.#allCaughtUp()) return "caught-up";
      let wakeAt = Math.min(
        nextRebalance,
        nextRenew,
        stopAt,
        this.#watch.nextAt,
        this.#coordinator.nextPollAt ?? stopAt,
      );
      if (drainAt !== undefined && !this.#drainAnnounced) wakeAt = Math.min(wakeAt, drainAt);
      if (stopWhenCaughtUp || this.#draining(now)) wakeAt = Math.min(wakeAt, now + CAUGHT_UP_POLL_MS);
      await clock.sleep(Math.max(0, wakeAt - clock.now()), this.#finished.wakeSignal(signal));
    }
  }

  #draining(now: number): boolean {
    return this.#options.drainAt !== undefined && now >= this.#options.drainAt;
  }

  async #rebalance(now: number): Promise<void> {
    this.#needsLook = false;
    const { acquired, decision } = await loggedRound(this.#o, () =>
      this.#coordinator.rebalance(now, this.#deadline, this.#scope(now)),
    );
    this.#lastDecision = decision;
    for (const lease of acquired) this.#start(lease);
    this.#waitNotice.update(this.#coordinator.overdue(now), now);
  }

  /** Leases handed over to us, and partitions the leader just moved to us: taken at once. */
  async #poll(now: number): Promise<void> {
    const acquired = await loggedPoll(this.#o, () =>
      this.#coordinator.poll(now, this.#deadline, this.#scope(now)),
    );
    for (const lease of acquired) if (!this.#active.has(partitionKey(lease))) this.#start(lease);
    this.#waitNotice.update(this.#coordinator.overdue(now), now);
  }

  #scope(now: number): RebalanceScope {
    // Nor a lease being given back: still ours, and once its asker withdrew it reads as ours to resume.
    const exclude = new Set([...this.#active.keys(), ...this.#leases.givingBack]);
    const backoff = this.#backoff.pending(now);
    return { exclude, backoff, relevant: (key) => this.#routes.has(key), draining: this.#draining(now) };
  }

  #start(lease: Lease): void {
    const key = partitionKey(lease);
    const route = this.#routes.get(key);
    if (route === undefined) return;
    const held = new HeldLease(lease, route, this.#deadline);
    const pump = new PartitionPump(pumpDeps(this.#o, this.#readAhead), pumpSettings(this.#o.settings), held);
    this.#leases.resumed(key);
    const term: Term = { key, held, pump, done: pump.run() };
    this.#active.set(key, term);
    void term.done.then(() => this.#finished.push(term));
  }

  /** Deals with the terms that ended since the last call; true when a partition failed. */
  #reap(): boolean {
    let failed = false;
    for (const term of this.#finished.take()) {
      if (this.#active.get(term.key) === term) this.#active.delete(term.key);
      const status = term.pump.status;
      this.#tally.termEnded(term.held.route, status);
      if (status.error !== null) {
        // Its pump checkpointed what landed: the lease goes back at once, for the leader to give
        // to another worker, and this run leaves the partition alone for its backoff.
        const now = this.#o.clock.now();
        this.#report.failed(term.held.route, status.error, this.#backoff.failed(term.key, now), now);
        if (!term.held.lost) this.#leases.giveBack(term.held);
        failed = true;
        continue;
      }
      this.#backoff.recovered(term.key);
      if (!status.caughtUp && !term.held.handoffRequested && !this.#stopping) {
        // Stopped short of its end without an error (expired by our clock, lost, taken): ours to
        // resume or free for anyone, unknown until the next look at the table: not caught up.
        this.#needsLook = true;
      }
      if (term.held.lost) continue;
      // The asker is waiting for it: hand it over now, not at the end of the run.
      if (term.held.handoffRequested && !this.#stopping) this.#leases.giveBack(term.held);
      else this.#leases.keep(term.key, term.held);
    }
    return failed;
  }

  #allCaughtUp(): boolean {
    const decision = this.#lastDecision;
    if (this.#needsLook) return false;
    // Not before the leader has assigned us anything (or nothing): partitions may be ours to take.
    if (decision === null || !decision.assigned || decision.available > 0) return false;
    // A lease asked for is about to be handed to us: leaving would leave it idle until it expires.
    if (this.#coordinator.awaiting) return false;
    for (const term of this.#active.values()) if (!term.pump.status.caughtUp) return false;
    return true;
  }

  /** Pumps finish their write in flight and checkpoint; every lease still ours is then released. */
  async #windDown(): Promise<void> {
    this.#stopping = true;
    await this.#watch.stop();
    const terms = [...this.#active.values()];
    for (const term of terms) term.held.stop();
    await Promise.all(terms.map((t) => t.done));
    // The `then` that queues a finished term may not have run yet.
    for (const term of terms)
      if (!this.#finished.includes(term) && this.#active.has(term.key)) this.#finished.push(term);
    this.#reap();
    const released = await this.#leases.finish();
    const late = () => this.#o.clock.now() >= this.#deadline;
    await this.#coordinator.leave(this.#o.clock.now(), { released, late });
  }
}
