/**
 * The UpdateItem a checkpoint and a checkpoint reset (LeaseStore.resetCheckpoint) write, with
 * the checks of their arguments: what the checkpoint says about its target position and its
 * source log (topic id, leader epoch) rides in the same conditional write as the offset.
 */

import { withPoint } from "../core/lease/offset-map.js";
import type { Lease, SourcePosition } from "../core/ports.js";
import { invalidArgument, requireOffset } from "./lease-arguments.js";
import { checkpointAdvances, type Holding, LeaseConditions } from "./lease-conditions.js";
import { LeaseUpdate } from "./lease-update.js";
import { encodeOffsetMap } from "./offset-map-attribute.js";

/**
 * A checkpoint of `held` at `nextOffset`. The target position travels in the same conditional
 * write as the checkpoint it belongs to: stored apart, a crash between the two writes would pair a
 * checkpoint with a position from another batch, and a position later than a landed write would
 * hide that write from the next holder, which would copy it again. A checkpoint that stays put
 * may still bring a position (a lease from before exactly-once mode, or a pin retried): any
 * position the holder observed is a valid one for it. Which source log the checkpoint belongs to
 * rides along for the same reason: paired with another batch's epoch, a truncation check on
 * resume would compare wrong values.
 */
export function checkpointUpdate(
  held: Lease,
  holder: Holding,
  nextOffset: number,
  now: number,
  position: { readonly targetOffset: number | undefined; readonly source: SourcePosition | undefined },
): LeaseUpdate {
  const update = new LeaseUpdate(LeaseConditions.checkpoint({ ...held, ...holder }, nextOffset, now));
  // lastProgressAt moves only with the checkpoint: it is how stalled partitions are found.
  if (checkpointAdvances(held, nextOffset)) update.set("checkpoint", nextOffset).set("lastProgressAt", now);
  update.set("updatedAt", now);
  if (position.targetOffset !== undefined) {
    update.set("targetOffset", position.targetOffset);
    // The pair joins the lease's offset map in the same write (offset-map.ts). Built from the
    // held lease: only this holder writes it, and a stale base only loses points (a longer
    // translation scan), never makes one wrong.
    // A lease's first checkpoint is its pin, stored before anything was copied: the origin.
    const origin = held.checkpoint === null && (held.offsetMap ?? []).length === 0;
    const point = {
      source: nextOffset,
      target: position.targetOffset,
      ...(origin ? { origin: true as const } : {}),
    };
    update.set("offsetMap", encodeOffsetMap(withPoint(held.offsetMap ?? [], point)));
  }
  if (position.source !== undefined) withSource(update, "checkpoint", position.source, nextOffset);
  return update;
}

/** A reset of `held`'s checkpoint to `nextOffset` (backwards too), with its new positions. */
export function resetCheckpointUpdate(
  held: Lease,
  holder: Holding,
  nextOffset: number,
  now: number,
  position: { readonly targetOffset: number | null; readonly source: SourcePosition },
): LeaseUpdate {
  const operation = "resetCheckpoint";
  requireOffset(operation, "nextOffset", nextOffset);
  if (held.checkpoint === null) {
    throw invalidArgument(
      operation,
      "held.checkpoint",
      null,
      "an offset (a lease without one has nothing to reset)",
    );
  }
  const { targetOffset } = position;
  if (targetOffset !== null) requireOffset(operation, "targetOffset", targetOffset);
  const update = new LeaseUpdate(LeaseConditions.resetCheckpoint(holder, held.checkpoint, now))
    .set("checkpoint", nextOffset)
    .set("updatedAt", now);
  // A position paired with the old checkpoint would point exactly-once recovery at records the
  // reset made meaningless, so without a new one the old one goes.
  // The offset map goes with it: its source offsets named records of the log that diverged.
  if (targetOffset === null) update.remove("targetOffset", "offsetMap");
  else
    update
      .set("targetOffset", targetOffset)
      .set("offsetMap", encodeOffsetMap([{ source: nextOffset, target: targetOffset }]));
  return withSource(update, operation, position.source, nextOffset, "reset");
}

/**
 * Sets the source position on `update`. An unknown topic id (a cluster without ids) is kept as
 * stored by a checkpoint and removed by a reset (the old one describes the log the reset left).
 * The epoch is always the checkpointer's current one (Lease.sourceEpoch), null removing it, and
 * goes with the checkpoint it is stored with (`sourceEpochAt`, lease-item.ts): an epoch paired
 * with a checkpoint it does not belong to is what made a clean leader change look like a
 * truncation. Older versions' `sourceLeaderEpoch` is never read; it is removed here to tidy.
 */
function withSource(
  update: LeaseUpdate,
  operation: string,
  source: SourcePosition,
  nextOffset: number,
  kind?: "reset",
): LeaseUpdate {
  if (source.topicId === "") {
    throw invalidArgument(operation, "source.topicId", source.topicId, "a non-empty string or null");
  }
  if (source.leaderEpoch !== null) requireOffset(operation, "source.leaderEpoch", source.leaderEpoch);
  if (source.topicId !== null) update.set("sourceTopicId", source.topicId);
  else if (kind === "reset") update.remove("sourceTopicId");
  if (source.leaderEpoch !== null)
    update.set("sourceEpoch", source.leaderEpoch).set("sourceEpochAt", nextOffset);
  else update.remove("sourceEpoch", "sourceEpochAt");
  return update.remove("legacySourceLeaderEpoch");
}
