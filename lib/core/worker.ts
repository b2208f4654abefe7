/**
 * One replication run of one worker (one Lambda invocation, one CLI run): plan topics, take a
 * fair share of partition leases, pump every held partition concurrently until the deadline,
 * then checkpoint and give the leases back.
 *
 * Safety rests on three rules, each enforced in one place:
 *  - a checkpoint moves only past records the target acknowledged (PartitionPump), so a kill at
 *    any instant loses nothing; duplicates are possible and bounded (see partition-pump.ts);
 *  - every lease expiry is min(now + duration, deadline) (leaseExpiry), so a holder that stalls
 *    past its deadline no longer holds anything;
 *  - a write starts only if it can finish writeSafetyMarginMs before the lease expires, judged
 *    by this worker's own clock, which keeps a worker that cannot reach the lease store from
 *    writing after its leases may have passed to someone else.
 */
import { describeError, type ErrorCode, isReplicatorError, ReplicatorError } from "../errors.js";
import { HeldLease } from "./held-lease.js";
import { type ClaimDecision, LeaseCoordinator, leaseExpiry } from "./lease-coordinator.js";
import { type FetchLimits, partitionKey, type TopicPartition } from "./model.js";
import { PartitionPump, type PumpStatus, type PumpStopReason } from "./partition-pump.js";
import { type PartitionRoute, planTopics } from "./planner.js";
import type {
  Clock,
  ClusterAdmin,
  Lease,
  LeaseStore,
  Logger,
  ReplicationMetrics,
  SourceReader,
  TargetWriter,
  TopicMapping,
} from "./ports.js";
import type { ProvenanceSettings } from "./provenance.js";
import type { StartFrom } from "./pump-start.js";
import { ReadAheadBudget } from "./read-ahead.js";

export interface WorkerSettings {
  readonly batch: FetchLimits;
  readonly leases: {
    /** How long a claim or renewal holds a lease (always capped at the run's deadline). */
    readonly durationMs: number;
    readonly renewIntervalMs: number;
    /** How often the worker looks for leases to take. */
    readonly rebalanceIntervalMs: number;
  };
  readonly startFrom: StartFrom;
  /** Replication factor of target topics the worker creates. */
  readonly replicationFactor: number;
  /** At least the target writer's request timeout; see PumpSettings.writeSafetyMarginMs. */
  readonly writeSafetyMarginMs: number;
  /** Exactly-once mode (needs WorkerOptions.targetReader); null or absent: at-least-once. */
  readonly provenance?: ProvenanceSettings | null;
  /**
   * Bytes of fetched records all pumps of a run may hold, together, beyond the batch each is
   * writing (see ReadAhead). @default 64 MiB
   */
  readonly readAheadBytes?: number;
}

export const DEFAULT_READ_AHEAD_BYTES = 64 * 1024 * 1024;

export interface WorkerOptions {
  readonly workerId: string;
  readonly source: SourceReader;
  readonly target: TargetWriter;
  readonly sourceAdmin: ClusterAdmin;
  readonly targetAdmin: ClusterAdmin;
  /** Reads the TARGET cluster's partitions back; required when settings.provenance is set. */
  readonly targetReader?: SourceReader;
  readonly leases: LeaseStore;
  readonly mapping: TopicMapping;
  readonly settings: WorkerSettings;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: ReplicationMetrics;
  /** Randomness for lease choice; tests pin it. @default Math.random */
  readonly random?: () => number;
}

export interface ReplicateOptions {
  /** End as soon as every held partition is caught up and no lease is free (CLI `run --once`, tests). */
  readonly stopWhenCaughtUp?: boolean;
  readonly signal?: AbortSignal;
}

export interface PartitionSummary {
  readonly source: TopicPartition;
  readonly target: TopicPartition;
  /** Records and bytes this worker copied in this run, over all the times it held the lease. */
  readonly records: number;
  readonly bytes: number;
  /** How many times this worker took the lease during the run. */
  readonly terms: number;
  readonly checkpoint: number | null;
  readonly caughtUp: boolean;
  /** Why the last term ended. */
  readonly stopReason: PumpStopReason | null;
  readonly error: ReplicatorError | null;
}

export interface RunError {
  readonly topic: string;
  /** null for errors of a whole topic (planning). */
  readonly partition: number | null;
  readonly code: ErrorCode;
  readonly message: string;
}

export type RunEndReason = "deadline" | "caught-up" | "aborted";

export interface RunSummary {
  readonly workerId: string;
  readonly startedAt: number;
  readonly endedAt: number;
  readonly endReason: RunEndReason;
  /** Every partition this worker held at some point of the run. */
  readonly partitions: PartitionSummary[];
  readonly errors: RunError[];
  /** Every partition held at the end was caught up and none ended in error. */
  readonly caughtUp: boolean;
}

/** Problems with the settings, all at once; empty when they are usable. */
export function checkWorkerSettings(settings: WorkerSettings): string[] {
  const problems: string[] = [];
  const { batch, leases, writeSafetyMarginMs, replicationFactor } = settings;
  const positive = {
    "batch.maxRecords": batch.maxRecords,
    "batch.maxBytes": batch.maxBytes,
    "leases.durationMs": leases.durationMs,
    "leases.renewIntervalMs": leases.renewIntervalMs,
    "leases.rebalanceIntervalMs": leases.rebalanceIntervalMs,
    writeSafetyMarginMs,
  };
  for (const [path, value] of Object.entries(positive)) {
    if (!(value > 0)) problems.push(`${path} must be > 0`);
  }
  if (!(batch.maxWaitMs >= 0)) problems.push("batch.maxWaitMs must be >= 0");
  const readAhead = settings.readAheadBytes ?? DEFAULT_READ_AHEAD_BYTES;
  if (!Number.isSafeInteger(readAhead) || readAhead < 0)
    problems.push("readAheadBytes must be an integer >= 0");
  if (!Number.isInteger(replicationFactor) || (replicationFactor < 1 && replicationFactor !== -1)) {
    problems.push("replicationFactor must be a positive integer or -1 (broker default)");
  }
  // A renewal must land while the lease still has more than the margin left, or pumps pause
  // before every renewal.
  if (leases.renewIntervalMs + writeSafetyMarginMs >= leases.durationMs) {
    problems.push("leases.renewIntervalMs + writeSafetyMarginMs must be < leases.durationMs");
  }
  return problems;
}

interface Term {
  readonly key: string;
  readonly held: HeldLease;
  readonly pump: PartitionPump;
  readonly done: Promise<PumpStatus>;
}

interface PartitionTally {
  route: PartitionRoute;
  records: number;
  bytes: number;
  terms: number;
  last: PumpStatus | null;
}

const STORE_RETRY_MS = 1000;
const CAUGHT_UP_POLL_MS = 200;
/** How often a worker looks for a lease it asked for (one lease-table read each time). */
const AWAIT_POLL_MS = 500;

export class Worker {
  readonly #o: WorkerOptions;
  readonly #coordinator: LeaseCoordinator;

  constructor(options: WorkerOptions) {
    const problems = checkWorkerSettings(options.settings);
    if (problems.length > 0) {
      throw new ReplicatorError("CONFIG_INVALID", `invalid worker settings: ${problems.join("; ")}`, {
        details: { problems },
      });
    }
    if ((options.settings.provenance ?? null) !== null && options.targetReader === undefined) {
      throw new ReplicatorError(
        "CONFIG_INVALID",
        "provenance needs a targetReader to read the target's tail",
        {
          details: { problems: ["targetReader is required with provenance"] },
        },
      );
    }
    this.#o = options;
    this.#coordinator = new LeaseCoordinator({
      store: options.leases,
      workerId: options.workerId,
      durationMs: options.settings.leases.durationMs,
      ...(options.random === undefined ? {} : { random: options.random }),
    });
  }

  /**
   * Replicates until `deadline` (epoch ms). No lease this run takes expires after it and no
   * write is started that could end after it; releasing the leases happens just after it, so
   * callers leave a few seconds of their own time budget beyond `deadline`.
   */
  async replicate(deadline: number, options: ReplicateOptions = {}): Promise<RunSummary> {
    const run = new Run(this.#o, this.#coordinator, deadline, options);
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
  readonly #finished: Term[] = [];
  /** Leases whose pump ended without losing them or failing: released at the end. */
  readonly #toRelease = new Map<string, HeldLease>();
  /** Partitions stopped on a non-retryable error: not taken again in this run. */
  readonly #failed = new Set<string>();
  /** Handoff releases under way; the run waits for them before it returns. */
  readonly #releasing = new Set<Promise<void>>();
  #stopping = false;
  /** A pump ended short of its partition's end: look at the lease table before calling it done. */
  #needsLook = false;
  readonly #tallies = new Map<string, PartitionTally>();
  readonly #errors: RunError[] = [];
  #lastDecision: ClaimDecision | null = null;

  constructor(o: WorkerOptions, coordinator: LeaseCoordinator, deadline: number, options: ReplicateOptions) {
    this.#o = o;
    this.#coordinator = coordinator;
    this.#deadline = deadline;
    this.#options = options;
    this.#startedAt = o.clock.now();
    this.#readAhead = new ReadAheadBudget(o.settings.readAheadBytes ?? DEFAULT_READ_AHEAD_BYTES);
  }

  async execute(): Promise<RunSummary> {
    const { clock, logger, settings, workerId } = this.#o;
    const signal = this.#options.signal;
    // No write may start after this, so there is nothing left to do for a pump.
    const stopAt = this.#deadline - settings.writeSafetyMarginMs;
    logger.info("replication run starting", { workerId, deadline: this.#deadline });

    const planned = await this.#plan(stopAt);
    const plan = planned ?? { partitions: [], errors: [] };
    for (const { topic, error } of plan.errors) {
      this.#errors.push({ topic, partition: null, code: error.code, message: error.message });
      this.#o.metrics.partitionError({ topic, partition: -1, code: error.code });
      logger.error("topic not mirrored", {
        topic,
        code: error.code,
        error: error.message,
        details: error.details,
      });
    }
    for (const route of plan.partitions) this.#routes.set(partitionKey(route.source), route);

    let endReason: RunEndReason = "deadline";
    const ensured = planned !== null && (await this.#ensureLeases(stopAt));
    if (ensured) {
      let nextRebalance = clock.now();
      let nextRenew = clock.now() + settings.leases.renewIntervalMs;
      for (;;) {
        if (signal?.aborted) {
          endReason = "aborted";
          break;
        }
        const now = clock.now();
        if (now >= stopAt) break;
        if (now >= nextRenew) {
          await this.#renewAll(now);
          nextRenew = now + settings.leases.renewIntervalMs;
        }
        if (now >= nextRebalance) {
          await this.#rebalance(now);
          // A lease we asked for is handed over at the holder's next checkpoint or renewal; look
          // again soon rather than leaving it idle for a whole rebalance interval.
          const awaiting = (this.#lastDecision?.awaiting ?? 0) > 0;
          nextRebalance =
            now +
            (awaiting
              ? Math.min(AWAIT_POLL_MS, settings.leases.rebalanceIntervalMs)
              : settings.leases.rebalanceIntervalMs);
        }
        this.#reap();
        // A partition stopped short of its end: find out at once whether to resume it.
        if (this.#needsLook) nextRebalance = Math.min(nextRebalance, now + CAUGHT_UP_POLL_MS);
        if (this.#options.stopWhenCaughtUp && this.#allCaughtUp()) {
          endReason = "caught-up";
          break;
        }
        let wakeAt = Math.min(nextRebalance, nextRenew, stopAt);
        if (this.#options.stopWhenCaughtUp) wakeAt = Math.min(wakeAt, now + CAUGHT_UP_POLL_MS);
        await clock.sleep(Math.max(0, wakeAt - clock.now()), signal);
      }
    } else if (signal?.aborted) {
      endReason = "aborted";
    }

    await this.#windDown();
    const summary = this.#summary(endReason);
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
   * A cluster may be briefly unreachable (broker restarting, metadata moving): retry planning
   * until there is no time left, then end the run with the error in its summary rather than
   * throwing, since the next run simply tries again. Non-retryable errors still throw.
   */
  async #plan(stopAt: number): Promise<Awaited<ReturnType<typeof planTopics>> | null> {
    const { clock, logger, settings } = this.#o;
    for (;;) {
      try {
        return await planTopics({
          sourceAdmin: this.#o.sourceAdmin,
          targetAdmin: this.#o.targetAdmin,
          mapping: this.#o.mapping,
          replicationFactor: settings.replicationFactor,
        });
      } catch (error) {
        if (!isReplicatorError(error) || !error.retryable) throw error;
        logger.warn("planning topics failed, retrying", { code: error.code, error: error.message });
        if (clock.now() + STORE_RETRY_MS >= stopAt || this.#options.signal?.aborted) {
          this.#errors.push({ topic: "", partition: null, code: error.code, message: error.message });
          return null;
        }
        await clock.sleep(STORE_RETRY_MS, this.#options.signal);
      }
    }
  }

  /** The lease store may be briefly unreachable; keep trying until there is no time left. */
  async #ensureLeases(stopAt: number): Promise<boolean> {
    const { clock, leases, logger } = this.#o;
    const partitions = [...this.#routes.values()].map((r) => r.source);
    for (;;) {
      try {
        await leases.ensure(partitions);
        return true;
      } catch (error) {
        if (!isReplicatorError(error) || !error.retryable) throw error;
        logger.warn("creating lease items failed, retrying", { code: error.code });
        if (clock.now() + STORE_RETRY_MS >= stopAt || this.#options.signal?.aborted) {
          this.#errors.push({ topic: "", partition: null, code: error.code, message: error.message });
          return false;
        }
        await clock.sleep(STORE_RETRY_MS, this.#options.signal);
      }
    }
  }

  async #rebalance(now: number): Promise<void> {
    this.#needsLook = false;
    const exclude = new Set<string>([...this.#active.keys(), ...this.#failed]);
    try {
      const { acquired, requested, decision } = await this.#coordinator.rebalance(now, this.#deadline, {
        exclude,
        relevant: (lease) => this.#routes.has(partitionKey(lease)),
      });
      // The leases just claimed were counted as available when the decision was made; without
      // this a `stopWhenCaughtUp` run would wait a whole rebalance interval after catching up.
      const claimed = acquired.filter((l) =>
        decision.take.some((t) => partitionKey(t) === partitionKey(l)),
      ).length;
      // The decision counted the leases asked for before this round's request: the one just asked
      // for is awaited too, or a `stopWhenCaughtUp` run could leave right after asking, and the
      // holder would hand the lease to a worker that has gone.
      this.#lastDecision = {
        ...decision,
        available: decision.available - claimed,
        awaiting: decision.awaiting + (requested === null ? 0 : 1),
      };
      for (const lease of acquired) this.#start(lease);
      if (acquired.length > 0) {
        this.#o.logger.info("leases taken", {
          workerId: this.#o.workerId,
          taken: acquired.map((l) => `${l.topic}/${l.partition}`),
          target: decision.target,
          liveWorkers: decision.liveWorkers,
        });
      }
      if (requested !== null) {
        this.#o.logger.info("lease handoff requested", {
          workerId: this.#o.workerId,
          lease: `${requested.topic}/${requested.partition}`,
          holder: requested.owner,
          target: decision.target,
          liveWorkers: decision.liveWorkers,
        });
      }
    } catch (error) {
      // Nothing new is taken this round; pumps of held leases go on while their leases last.
      this.#lastDecision = null;
      const level = isReplicatorError(error) && error.retryable ? "warn" : "error";
      this.#o.logger[level]("taking leases failed", describeError(error));
    }
  }

  #start(lease: Lease): void {
    const key = partitionKey(lease);
    const route = this.#routes.get(key);
    if (route === undefined) return;
    const {
      source,
      target,
      sourceAdmin,
      targetAdmin,
      targetReader,
      leases,
      clock,
      logger,
      metrics,
      settings,
    } = this.#o;
    const held = new HeldLease(lease, route, this.#deadline);
    const pump = new PartitionPump(
      {
        source,
        target,
        sourceAdmin,
        store: leases,
        clock,
        logger,
        metrics,
        ...(targetReader === undefined
          ? {}
          : { targetTail: { reader: targetReader, admin: targetAdmin, logger } }),
        readAheadBudget: this.#readAhead,
      },
      {
        batch: settings.batch,
        startFrom: settings.startFrom,
        writeSafetyMarginMs: settings.writeSafetyMarginMs,
        provenance: settings.provenance ?? null,
      },
      held,
    );
    this.#toRelease.delete(key);
    const term: Term = { key, held, pump, done: pump.run() };
    this.#active.set(key, term);
    void term.done.then(() => this.#finished.push(term));
  }

  /** Renewals run side by side so one slow store call does not let other leases run out. */
  async #renewAll(now: number): Promise<void> {
    const expiresAt = leaseExpiry(now, this.#o.settings.leases.durationMs, this.#deadline);
    await Promise.all(
      [...this.#active.values()].map(async ({ held }) => {
        if (held.lost || held.signal.aborted || expiresAt <= held.lease.expiresAt) return;
        try {
          held.update(await this.#o.leases.renew(held.lease, expiresAt));
        } catch (error) {
          if (isReplicatorError(error, "LEASE_LOST")) {
            held.markLost();
            return;
          }
          // The pump keeps writing only while the lease is valid by our clock.
          this.#o.logger.warn("lease renewal failed", { ...held.route.source, ...describeError(error) });
        }
      }),
    );
  }

  #reap(): void {
    for (const term of this.#finished.splice(0)) {
      if (this.#active.get(term.key) === term) this.#active.delete(term.key);
      const status = term.pump.status;
      const tally = this.#tallies.get(term.key) ?? {
        route: term.held.route,
        records: 0,
        bytes: 0,
        terms: 0,
        last: null,
      };
      tally.records += status.records;
      tally.bytes += status.bytes;
      tally.terms += 1;
      tally.last = status;
      this.#tallies.set(term.key, tally);
      if (status.error !== null) {
        this.#failed.add(term.key);
        const { topic, partition } = term.held.route.source;
        this.#errors.push({ topic, partition, code: status.error.code, message: status.error.message });
        continue;
      }
      if (!status.caughtUp && !term.held.handoffRequested && !this.#stopping) {
        // The partition stopped short of its end without an error (lease expired by our clock,
        // lost or taken): it may be ours to resume or free for anyone, and until the next look at
        // the lease table nobody knows, so the run is not caught up.
        this.#needsLook = true;
      }
      if (!term.held.lost && term.held.handoffRequested && !this.#stopping) {
        // The asker is waiting for it: hand it over now, not at the end of the run.
        const release = this.#handOver(term.held).finally(() => this.#releasing.delete(release));
        this.#releasing.add(release);
      } else if (!term.held.lost) {
        this.#toRelease.set(term.key, term.held);
      }
    }
  }

  async #handOver(held: HeldLease): Promise<void> {
    try {
      // The taker's lease, so not capped by our deadline: the taker caps it by its own
      // (HeldLease.expiresAt) and renews it from there.
      const expiresAt = this.#o.clock.now() + this.#o.settings.leases.durationMs;
      const handed = await this.#o.leases.handOver(held.lease, expiresAt);
      this.#o.logger.info(handed ? "lease handed over" : "lease handover refused; it will expire", {
        ...held.route.source,
        to: held.lease.handoffTo,
      });
    } catch (error) {
      this.#o.logger.warn("handing lease over failed; it will expire", {
        ...held.route.source,
        ...describeError(error),
      });
    }
  }

  async #release(held: HeldLease): Promise<void> {
    try {
      await this.#o.leases.release(held.lease);
    } catch (error) {
      this.#o.logger.warn("releasing lease failed; it will expire", {
        ...held.route.source,
        ...describeError(error),
      });
    }
  }

  #allCaughtUp(): boolean {
    const decision = this.#lastDecision;
    if (this.#needsLook) return false;
    // A lease we asked for is about to be handed to us: leaving now would leave it owned by a
    // worker that has gone, idle until it expires.
    if (decision === null || decision.available > 0 || decision.awaiting > 0) return false;
    for (const term of this.#active.values()) if (!term.pump.status.caughtUp) return false;
    return true;
  }

  /**
   * Pumps finish the write they are in (it was started only if it fits before expiry) and
   * checkpoint it; then every lease still ours is released so others can take it at once.
   * Leases of failed partitions are kept until they expire (see PartitionPump).
   */
  async #windDown(): Promise<void> {
    this.#stopping = true;
    const terms = [...this.#active.values()];
    for (const term of terms) term.held.stop();
    await Promise.all(terms.map((t) => t.done));
    // The `then` that queues a finished term may not have run yet.
    for (const term of terms)
      if (!this.#finished.includes(term) && this.#active.has(term.key)) this.#finished.push(term);
    this.#reap();
    await Promise.all([...this.#toRelease.values()].map((held) => this.#release(held)));
    this.#toRelease.clear();
    await Promise.all([...this.#releasing]);
  }

  #summary(endReason: RunEndReason): RunSummary {
    const partitions: PartitionSummary[] = [...this.#tallies.values()]
      .sort((a, b) => compareRoutes(a.route, b.route))
      .map((t) => ({
        source: t.route.source,
        target: t.route.target,
        records: t.records,
        bytes: t.bytes,
        terms: t.terms,
        checkpoint: t.last?.checkpoint ?? null,
        caughtUp: t.last?.caughtUp ?? false,
        stopReason: t.last?.stopReason ?? null,
        error: t.last?.error ?? null,
      }));
    const held = partitions.filter((p) => p.stopReason !== "lease-lost");
    return {
      workerId: this.#o.workerId,
      startedAt: this.#startedAt,
      endedAt: this.#o.clock.now(),
      endReason,
      partitions,
      errors: [...this.#errors],
      caughtUp: this.#errors.length === 0 && held.every((p) => p.caughtUp),
    };
  }
}

function compareRoutes(a: PartitionRoute, b: PartitionRoute): number {
  if (a.source.topic !== b.source.topic) return a.source.topic < b.source.topic ? -1 : 1;
  return a.source.partition - b.source.partition;
}
