/** The lease protocol's time rules, shared by the coordinator and the leader. */
import type { Lease } from "../ports.js";

export function isExpired(lease: Lease, now: number): boolean {
  return lease.owner === null || lease.expiresAt <= now;
}

/** "A lease never outlives its holder's hard deadline", so a stalled holder cannot write after losing it. */
export function leaseExpiry(now: number, durationMs: number, hardDeadline: number): number {
  return Math.min(now + durationMs, hardDeadline);
}

/** How long a heartbeat (and the leader item) holds: three rounds, never longer than a lease. */
export function heartbeatTtlMs(o: {
  readonly durationMs: number;
  readonly rebalanceIntervalMs: number;
}): number {
  return Math.min(o.durationMs, 3 * o.rebalanceIntervalMs);
}
