/**
 * Consumer-group offset sync in `kafka-mirror run`, as the lag function does it on Lambda: the
 * same step (lib/offsets/sync-step.ts, built by wiring's groupSyncStep), the same rules (never
 * into a group with live members on the target, never backwards), the same rhythm (once a
 * minute, the lag schedule's) and, with --once, once more at the end of the run. A failed sync
 * is counted and logged, never a failed run.
 *
 * One syncer per lease table: the lag function is one at a time by its reserved concurrency of 1;
 * `run` processes sharing a table sync only in the process whose worker holds the lease leader
 * item (lib/core/run/lease-leader.ts), a lease taken by conditional write, so at most one process
 * leads at a time. A sync that a leader change makes twice is harmless: it commits the same
 * translation and never moves an offset backwards.
 */

import type { MirrorConfig } from "../config/schema.js";
import { systemClock } from "../core/clock.js";
import type { ClusterAdmin, LeaderLease, LeaseStore, Logger } from "../core/ports.js";
import type { KafkaRetry } from "../core/retry.js";
import { describeError } from "../errors.js";
import type { SyncReport } from "../offsets/sync.js";
import { type GroupSyncStep, runGroupSync } from "../offsets/sync-step.js";
import { topicSelectorOf } from "../replicator.js";
import type { ClusterSecurity } from "../secrets/cluster-security.js";
import { closeGroupSyncStep, clusterSide, groupSyncStep } from "../wiring.js";
import type { CliIo } from "./console.js";

/** The lag function's schedule: rate(1 minute). */
export const GROUP_SYNC_INTERVAL_MS = 60_000;
/** How long one sync's Kafka calls may be retried, inside the interval. */
const SYNC_BUDGET_MS = 45_000;

/**
 * Whether the process whose workers are `<slot>` or `<slot>.<round>` syncs now. While a worker
 * leads, only the leader's process does. With no live leader: not in the minute's sync (one
 * is elected within a round), but at the end of `run --once`, whose own worker just resigned.
 */
export function mayGroupSync(leader: LeaderLease | null, slot: string, now: number, atEnd: boolean): boolean {
  const live = leader !== null && leader.owner !== null && leader.expiresAt > now;
  if (!live) return atEnd;
  const owner = leader.owner ?? "";
  return owner === slot || owner.startsWith(`${slot}.`);
}

export interface RunGroupSyncDeps {
  readonly logger: Logger;
  readonly security: ClusterSecurity;
  readonly leases: LeaseStore;
  /** The run's worker id: its rounds' workers are `<slot>.<round>`. */
  readonly slot: string;
  readonly io: CliIo;
  readonly json: boolean;
  readonly signal: AbortSignal;
  /** `run --once`: no sync every minute, one at the end (sync(true)). */
  readonly once: boolean;
}

export class RunGroupSync {
  readonly #step: GroupSyncStep;
  readonly #sourceAdmin: ClusterAdmin;
  readonly #config: MirrorConfig;
  readonly #deps: RunGroupSyncDeps;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  synced = 0;
  failed = 0;

  /** Null when groups.whitelist selects no group (or provenance is off): nothing to sync. */
  static open(config: MirrorConfig, deps: RunGroupSyncDeps): RunGroupSync | null {
    const step = groupSyncStep(config, deps);
    if (step === null) return null;
    const sync = new RunGroupSync(config, step, deps);
    if (!deps.once) sync.#startEveryMinute();
    return sync;
  }

  private constructor(config: MirrorConfig, step: GroupSyncStep, deps: RunGroupSyncDeps) {
    this.#config = config;
    this.#step = step;
    this.#deps = deps;
    this.#sourceAdmin = clusterSide(config, "source", {
      logger: deps.logger,
      security: deps.security.source,
    }).admin();
  }

  /** A sync every minute until close(). */
  #startEveryMinute(): void {
    this.#timer = setInterval(() => {
      if (this.#running === undefined)
        this.#running = this.sync(false).finally(() => (this.#running = undefined));
    }, GROUP_SYNC_INTERVAL_MS);
  }

  /** One sync, if this process's turn (mayGroupSync); `atEnd` for the end of `run --once`. */
  async sync(atEnd: boolean): Promise<void> {
    const { leases, slot, logger } = this.#deps;
    try {
      if (!mayGroupSync(await leases.leader(), slot, systemClock.now(), atEnd)) return;
    } catch (error) {
      this.failed++;
      logger.error("group offset sync skipped: the lease leader could not be read", describeError(error));
      return;
    }
    const report = await runGroupSync(this.#step, {
      sourceAdmin: this.#sourceAdmin,
      leases,
      mapping: topicSelectorOf(this.#config),
      logger,
      retry: this.#retry(),
    });
    this.#count(report, atEnd);
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.#running;
    await Promise.allSettled([closeGroupSyncStep(this.#step), this.#sourceAdmin.close()]);
  }

  #retry(): KafkaRetry {
    const { logger, signal } = this.#deps;
    return {
      clock: systemClock,
      deadline: systemClock.now() + SYNC_BUDGET_MS,
      signal,
      onRetry: (what, error, attempt, delayMs) =>
        logger.warn(`${what} failed, retrying`, { attempt, delayMs, ...describeError(error) }),
    };
  }

  /** Counts the report; a line when something moved or failed, and always at the end. */
  #count(report: SyncReport, atEnd: boolean): void {
    this.synced += report.synced;
    this.failed += report.failed;
    if (this.#deps.json || (!atEnd && report.synced === 0 && report.failed === 0)) return;
    this.#deps.io.stdout.write(
      `${this.#deps.slot}: group offsets: ${report.synced} group(s) synced, ${report.active} skipped ` +
        `(members on the target), ${report.failed} failed\n`,
    );
  }
}
