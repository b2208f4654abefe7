/** What a lease round (LeaseCoordinator.rebalance and poll) is given and what it returns. */
import type { Lease } from "../ports.js";

export interface RebalanceScope {
  /** Partitions not to take this round: those our own pumps are on (or winding down). */
  readonly exclude?: ReadonlySet<string>;
  /**
   * Partitions this run failed lately, with the end of each one's backoff (failure-backoff.ts):
   * published in the heartbeat so the leader assigns them to others, and not taken before then.
   */
  readonly backoff?: ReadonlyMap<string, number>;
  /** Which partitions take part at all (this worker's plan); keys as model.partitionKey. */
  readonly relevant?: (key: string) => boolean;
  /** The run is draining (ReplicateOptions.drainAt passed): it takes nothing new. */
  readonly draining?: boolean;
}

/** What a round found, for logs and for deciding whether a `stopWhenCaughtUp` run is done. */
export interface ClaimDecision {
  /** Whether the leader has assigned this worker anything yet (an empty assignment counts). */
  readonly assigned: boolean;
  readonly leader: boolean;
  /** Partitions assigned to us. */
  readonly target: number;
  /** Live workers the leader counted (0 when we are not the leader). */
  readonly liveWorkers: number;
  /** Assigned partitions neither held nor awaited after the round (capped, or claim lost), plus the leader's deferred changes. */
  readonly available: number;
  /** Leases asked for and not handed over yet. */
  readonly awaiting: number;
}

/** What a poll between rounds took or asked for. */
export interface PollResult {
  readonly acquired: Lease[];
  readonly requested: Lease[];
}

export interface RebalanceResult {
  /** Leases this worker now holds and was not working on: claimed, or handed over to it. */
  readonly acquired: Lease[];
  /** Leases whose holder this worker asked, this round, to hand them over. */
  readonly requested: Lease[];
  readonly decision: ClaimDecision;
}
