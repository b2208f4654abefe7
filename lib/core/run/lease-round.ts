/**
 * The worker's lease round, outside the run loop: building the run's coordinator from the
 * worker's settings, and running a round (or a poll of awaited leases) so that a retryable
 * failure is logged, not thrown: pumps of held leases go on while their leases last, and the
 * next round tries again. A round that fails for good ends the run (see loggedRound).
 */
import { describeError } from "../../errors.js";
import type { Clock, Lease, LeaseStore, Logger } from "../ports.js";
import { isRetryable } from "../retry.js";
import { DEFAULT_MAX_CLAIMS_PER_ROUND, LeaseCoordinator } from "./lease-coordinator.js";
import type { ClaimDecision, PollResult, RebalanceResult } from "./lease-round-model.js";
import type { WorkerSettings } from "./worker-settings.js";

export interface RoundWiring {
  readonly workerId: string;
  readonly slot?: string | undefined;
  readonly formerSelf?: ((owner: string) => boolean) | undefined;
  readonly leases: LeaseStore;
  readonly clock: Pick<Clock, "now">;
  readonly settings: WorkerSettings;
  readonly logger: Logger;
}

/** One coordinator per run: its heartbeat's startedAt is the run's start. */
export function leaseCoordinatorFor(o: RoundWiring, startedAt: number): LeaseCoordinator {
  const { durationMs, renewIntervalMs, rebalanceIntervalMs } = o.settings.leases;
  return new LeaseCoordinator({
    store: o.leases,
    workerId: o.workerId,
    slot: o.slot ?? o.workerId,
    startedAt,
    durationMs,
    renewIntervalMs,
    rebalanceIntervalMs,
    maxClaimsPerRound: o.settings.leases.maxClaimsPerRound ?? DEFAULT_MAX_CLAIMS_PER_ROUND,
    // The leader notices the drain within a round, the holder the handoff request within a
    // renewal, and its last write takes up to the margin: start that long before the deadline.
    drainLeadMs: 2 * rebalanceIntervalMs + renewIntervalMs + o.settings.writeSafetyMarginMs,
    writeSafetyMarginMs: o.settings.writeSafetyMarginMs,
    clock: o.clock,
    logger: o.logger,
    formerSelf: o.formerSelf,
  });
}

/**
 * Runs one lease round; on a retryable failure logs it and returns nothing taken. A failure that
 * is not retryable (the table is gone or keyed wrong, access denied) is thrown after logging:
 * every later round would only repeat it, every rebalance interval until the deadline.
 */
export async function loggedRound(
  o: RoundWiring,
  round: () => Promise<RebalanceResult>,
): Promise<{ readonly acquired: Lease[]; readonly decision: ClaimDecision | null }> {
  try {
    const { acquired, requested, decision } = await round();
    const fields = { workerId: o.workerId, target: decision.target, leader: decision.leader };
    if (acquired.length > 0) o.logger.info("leases taken", { ...fields, taken: acquired.map(name) });
    if (requested.length > 0) {
      o.logger.info("lease handoff requested", {
        ...fields,
        leases: requested.map(name),
        holders: [...new Set(requested.map((l) => l.owner))],
      });
    }
    return { acquired, decision };
  } catch (error) {
    if (!isRetryable(error)) {
      o.logger.error("taking leases failed; ending the run", describeError(error));
      throw error;
    }
    o.logger.warn("taking leases failed", describeError(error));
    return { acquired: [], decision: null };
  }
}

/** Runs a poll between rounds; on failure logs it and returns none. */
export async function loggedPoll(o: RoundWiring, poll: () => Promise<PollResult>): Promise<Lease[]> {
  try {
    const { acquired, requested } = await poll();
    if (acquired.length > 0)
      o.logger.info("leases handed over", { workerId: o.workerId, taken: acquired.map(name) });
    if (requested.length > 0) {
      o.logger.info("lease handoff requested", {
        workerId: o.workerId,
        leases: requested.map(name),
        holders: [...new Set(requested.map((l) => l.owner))],
      });
    }
    return acquired;
  } catch (error) {
    o.logger.warn("looking at awaited leases failed", describeError(error));
    return [];
  }
}

function name(l: Lease): string {
  return `${l.topic}/${l.partition}`;
}
