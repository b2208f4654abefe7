/**
 * Handoffs no pump of this worker will act on (LeaseCoordinator). A lease handed to us that
 * another worker asked for before a pump of ours ran on it is passed on. At a run's end, each
 * lease we asked for, or the leader asked for on our behalf, gets our request withdrawn, or is
 * released if it was handed over first: a holder that read our heartbeat while it was still live
 * (the last one is written once the run's pumps have stopped) would otherwise hand us a lease
 * nobody copies until it expires; withdrawn, the holder's handover is refused and it releases.
 */
import { describeError } from "../../errors.js";
import { parseKey, partitionKey, type TopicPartition } from "../model.js";
import type { Lease, LeaseStore, Logger } from "../ports.js";
import { inParallel } from "./lease-leader.js";
import { isExpired } from "./lease-timing.js";

/**
 * Whether `workerId` may still take a lease handed to it at `now`: its heartbeat is live and its
 * run has not reached its stop (its deadline less `writeSafetyMarginMs`; a fleet shares the
 * setting), after which it takes nothing and writes its last heartbeat only once its pumps have
 * stopped. Read consistently: an eventually consistent read may miss that last heartbeat. False
 * when the item cannot be read: released, a lease costs a live asker one poll; handed to a gone
 * one, it idles until it expires.
 */
export async function askerAlive(
  store: LeaseStore,
  workerId: string,
  now: number,
  writeSafetyMarginMs: number,
): Promise<boolean> {
  try {
    const worker = await store.worker(workerId, { consistent: true });
    return worker !== null && worker.expiresAt > now && now < worker.deadline - writeSafetyMarginMs;
  } catch {
    return false;
  }
}

/**
 * A lease handed to us (or still ours) that another worker asked for before any pump of ours
 * ran on it: no pump will see the request, so hand it over now rather than leave it idle until
 * its expiry, or release it when the asker has gone. Only for leases without a pump here
 * (awaited, or not excluded from the round).
 */
export async function passOn(
  o: {
    readonly store: LeaseStore;
    readonly workerId: string;
    readonly durationMs: number;
    /** askerAlive's; 0 when not given. */
    readonly writeSafetyMarginMs?: number | undefined;
    readonly logger?: Logger | undefined;
  },
  lease: Lease,
  now: number,
): Promise<void> {
  const { workerId, store, durationMs, logger } = o;
  const to = lease.handoffTo;
  if (lease.owner !== workerId || isExpired(lease, now) || to === null || to === workerId) return;
  const alive = await askerAlive(store, to, now, o.writeSafetyMarginMs ?? 0);
  if (alive && (await store.handOver(lease, now + durationMs))) {
    logger?.info("lease handed over", { key: partitionKey(lease), to });
    return;
  }
  // The asker has gone or withdrew (its run ended), or the lease moved. No pump of ours is on it.
  await store.release(lease);
}

/** What `leave` withdraws requests on. */
export interface LeaveScope {
  /** Partitions whose leases this run held and has given back: nobody asked for them for us. */
  readonly released?: ReadonlySet<string>;
  /** True once there is no time left for lease reads: the rest are left to the holders' check. */
  readonly late?: () => boolean;
}

/** Reads of one lease, each after a refused withdrawal (the lease moved meanwhile). */
const ATTEMPTS = 3;

export interface WithdrawalOptions {
  readonly store: LeaseStore;
  readonly workerId: string;
  readonly logger?: Logger | undefined;
  /** Leases read and written at once. */
  readonly concurrency: number;
  /** LeaveScope.late: true once no lease is to be read any more. */
  readonly late: () => boolean;
}

/**
 * Withdraws `workerId`'s requests on the leases of `keys` (model.partitionKey), in that order
 * until `late`; past it a holder's consistent read of our expired heartbeat (askerAlive) is what
 * keeps a lease from us. Never throws.
 */
export async function withdrawRequests(o: WithdrawalOptions, keys: Iterable<string>): Promise<void> {
  await inParallel(
    [...new Set(keys)].map((key) => () => withdraw(o, parseKey(key))),
    o.concurrency,
  );
}

async function withdraw(o: WithdrawalOptions, tp: TopicPartition): Promise<void> {
  const { store, workerId, logger } = o;
  try {
    for (let attempt = 0; attempt < ATTEMPTS && !o.late(); attempt++) {
      const lease = await store.lease(tp);
      if (lease === null) return;
      if (lease.owner === workerId) {
        if (await store.release(lease))
          logger?.info("released a lease handed over as the run ended", { ...tp });
        return;
      }
      if (lease.owner === null || lease.handoffTo !== workerId) return;
      if (await store.withdrawHandoff(lease, workerId)) return;
    }
  } catch (error) {
    logger?.warn("withdrawing a handoff request failed", { ...tp, ...describeError(error) });
  }
}
