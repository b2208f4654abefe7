/**
 * What a refused write on a held lease means, read from the item as it is now: which of the
 * conditions (conditions.ts) failed, and the LEASE_LOST error that says so.
 */
import { ReplicatorError } from "../../errors.js";
import { partitionKey } from "../model.js";
import type { Holding, Lease } from "./model.js";

/** Why a conditional write on a held lease failed. */
export type LossReason = "missing" | "released" | "taken" | "expired" | "checkpoint-ahead";

/** Null when `current` is still held by `held`'s owner and counter (and unexpired at `now`). */
export function lossReason(held: Lease, current: Lease | undefined, now: number | null): LossReason | null {
  if (current === undefined) return "missing";
  if (current.counter !== held.counter) return "taken";
  if (current.owner === null) return "released";
  if (current.owner !== held.owner) return "taken";
  if (now !== null && current.expiresAt <= now) return "expired";
  return null;
}

/** The holding `held` describes; LEASE_LOST ("released") when it has no owner. */
export function requireHolder(held: Lease, operation: string): Holding {
  if (held.owner === null) {
    throw new ReplicatorError(
      "LEASE_LOST",
      `${operation} refused: lease ${partitionKey(held)} has no owner`,
      {
        details: { topic: held.topic, partition: held.partition, counter: held.counter, reason: "released" },
      },
    );
  }
  return { owner: held.owner, counter: held.counter };
}

/**
 * The LEASE_LOST for a refused `operation` on `held`. Without a current item to compare, the
 * condition can only have failed on expiry.
 */
export function leaseLost(
  held: Lease,
  operation: string,
  current: Lease | undefined,
  nextOffset: number | null,
  reason?: LossReason,
): ReplicatorError {
  const why = reason ?? lossReason(held, current, null) ?? "expired";
  return new ReplicatorError(
    "LEASE_LOST",
    `${operation} refused: lease ${partitionKey(held)} (owner ${held.owner}, counter ${held.counter}) is ${why}`,
    {
      details: {
        topic: held.topic,
        partition: held.partition,
        owner: held.owner,
        counter: held.counter,
        reason: why,
        ...(nextOffset === null ? {} : { nextOffset }),
        ...(current === undefined
          ? {}
          : {
              currentOwner: current.owner,
              currentCounter: current.counter,
              currentExpiresAt: current.expiresAt,
              currentCheckpoint: current.checkpoint,
            }),
      },
    },
  );
}

/**
 * A refused checkpoint or reset of `held` to `nextOffset`, given the item as it is now. Still
 * ours means the checkpoint part of the condition failed: stored at `nextOffset` already, our own
 * earlier attempt landed (an SDK retry of a write that did land), which is success; anywhere else
 * our view is not the truth any more ("checkpoint-ahead"). Returns the stored lease or throws.
 */
export function settleRefusedCheckpoint(
  held: Lease,
  operation: string,
  current: Lease | undefined,
  nextOffset: number,
  now: number,
): Lease {
  if (current !== undefined && lossReason(held, current, now) === null) {
    if (current.checkpoint === nextOffset) return current;
    throw leaseLost(held, operation, current, nextOffset, "checkpoint-ahead");
  }
  throw leaseLost(held, operation, current, nextOffset);
}
