/**
 * Re-plans topics while a run goes on, so a topic created on the source (or a partition added to
 * one) starts copying within one discovery interval instead of at the next run: every
 * `discoveryIntervalMs` the planner runs again (create, grow, sync configs: planner.ts), lease
 * items are made for partitions the run has not routed yet, and only then are their routes
 * handed to the run, so the lease rounds can take them.
 *
 * A discovery runs beside the run loop, never inside it: a cluster that does not answer must not
 * hold up lease renewals. Problems are reported once per topic and code per run (a topic that
 * stays in error is not logged every 10 s); a failed discovery is logged and the next one tries
 * again.
 */
import { describeError } from "../../errors.js";
import { partitionKey, type TopicPartition } from "../model.js";
import type { PartitionRoute, TopicPlan, TopicPlanError } from "../plan/model.js";
import type { Clock, Logger, ReplicationMetrics } from "../ports.js";
import type { RunTally } from "./run-summary.js";
import { DEFAULT_DISCOVERY_INTERVAL_MS } from "./worker-settings.js";

export interface TopicWatchOptions {
  /** One planning, as at the run's start (it may retry its own writes until the run's stop). */
  readonly plan: (signal: AbortSignal) => Promise<TopicPlan>;
  /** Creates lease items (LeaseStore.ensure). */
  readonly ensure: (partitions: readonly TopicPartition[]) => Promise<void>;
  readonly clock: Clock;
  /** @default DEFAULT_DISCOVERY_INTERVAL_MS (10 s) */
  readonly intervalMs?: number | undefined;
  readonly logger: Logger;
  /** A topic left out, reported once per topic and code. */
  readonly onTopicError: (problem: TopicPlanError) => void;
}

export class TopicWatch {
  readonly #o: TopicWatchOptions;
  readonly #routed = new Set<string>();
  readonly #reported = new Set<string>();
  readonly #stop = new AbortController();
  readonly #intervalMs: number;
  #nextAt: number;
  #running: Promise<void> | null = null;
  /** Routes whose lease items exist, waiting for the run to take them (see take). */
  #found: PartitionRoute[] = [];
  #emptySelection: string | null = null;

  constructor(options: TopicWatchOptions) {
    this.#o = options;
    this.#intervalMs = options.intervalMs ?? DEFAULT_DISCOVERY_INTERVAL_MS;
    this.#nextAt = options.clock.now() + this.#intervalMs;
  }

  /**
   * When the next discovery is due (the run loop wakes up for it). Never while one runs: its due
   * time is then past, and a loop that slept until it would wake at once, over and over, with
   * nothing to wait for (issue 13's stall: the loop spun on resolved sleeps and starved every
   * pump of the process for seconds). What a running discovery finds is taken at the next wake.
   */
  get nextAt(): number {
    return this.#running === null ? this.#nextAt : Number.POSITIVE_INFINITY;
  }

  /** Takes the run's first plan: its routes are known, its problems reported. */
  adopt(plan: TopicPlan): PartitionRoute[] {
    this.#report(plan);
    return this.#fresh(plan.partitions);
  }

  /** Starts a discovery if one is due and none is running. */
  poll(now: number): void {
    if (this.#running !== null || now < this.#nextAt || this.#stop.signal.aborted) return;
    this.#running = this.#discover().finally(() => {
      this.#running = null;
      this.#nextAt = this.#o.clock.now() + this.#intervalMs;
    });
  }

  /** Why the last plan selected no source topic (TopicPlan.emptySelection), or null. */
  get emptySelection(): string | null {
    return this.#emptySelection;
  }

  /** Routes found since the last call, their lease items already created. */
  take(): PartitionRoute[] {
    return this.#found.splice(0);
  }

  /** Ends a discovery under way (its retries) and waits for it. */
  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#running;
  }

  async #discover(): Promise<void> {
    try {
      const plan = await this.#o.plan(this.#stop.signal);
      this.#report(plan);
      const fresh = plan.partitions.filter((r) => !this.#routed.has(partitionKey(r.source)));
      if (fresh.length === 0) return;
      await this.#o.ensure(fresh.map((r) => r.source));
      // Found while the mirror runs: its first record may predate us by a discovery interval.
      this.#found.push(...this.#fresh(fresh).map((r) => ({ ...r, startFrom: "earliest" as const })));
      this.#o.logger.info("new partitions discovered", {
        partitions: fresh.map((r) => partitionKey(r.source)),
      });
    } catch (error) {
      // Nothing new is routed this time; the next discovery lists again.
      this.#o.logger.warn("topic discovery failed", describeError(error));
    }
  }

  #fresh(routes: readonly PartitionRoute[]): PartitionRoute[] {
    const fresh = routes.filter((r) => !this.#routed.has(partitionKey(r.source)));
    for (const r of fresh) this.#routed.add(partitionKey(r.source));
    return fresh;
  }

  #report(plan: TopicPlan): void {
    // Not once per run like the problems below: a run copying nothing must keep saying why.
    this.#emptySelection = plan.emptySelection;
    if (plan.emptySelection !== null) {
      this.#o.logger.warn("the whitelist selects no topic; nothing is copied", { why: plan.emptySelection });
    }
    for (const problem of plan.errors) {
      if (this.#firstTime("error", problem)) this.#o.onTopicError(problem);
    }
    for (const problem of plan.warnings) {
      if (!this.#firstTime("warning", problem)) continue;
      this.#o.logger.warn("topic config not synced", {
        topic: problem.topic,
        ...describeError(problem.error),
      });
    }
  }

  #firstTime(kind: string, { topic, error }: TopicPlanError): boolean {
    const key = `${kind}\u0000${topic}\u0000${error.code}\u0000${kind === "warning" ? error.message : ""}`;
    if (this.#reported.has(key)) return false;
    this.#reported.add(key);
    return true;
  }
}

/** A topic left out of the run: in its summary, a metric and an error log. */
export function reportTopicError(
  { topic, error }: TopicPlanError,
  tally: RunTally,
  metrics: ReplicationMetrics,
  logger: Logger,
): void {
  tally.topicError(topic, error);
  metrics.partitionError({ topic, partition: -1, code: error.code });
  logger.error("topic not mirrored", {
    topic,
    code: error.code,
    error: error.message,
    details: error.details,
  });
}
