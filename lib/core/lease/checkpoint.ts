/**
 * What a checkpoint and a checkpoint reset (LeaseStore.resetCheckpoint) write, with the checks of
 * their arguments: what the checkpoint says about its target position and its source log (topic
 * id, leader epoch) rides in the same conditional write as the offset.
 */
import { invalidArgument, requireOffset } from "./arguments.js";
import { checkpointAdvances, LeaseConditions } from "./conditions.js";
import type { Condition, Holding, Lease, SourcePosition } from "./model.js";
import { withPoint } from "./offset-map.js";
import { ChangeSet } from "./table.js";

/** One conditional write: what it changes and when. */
export interface ConditionalChanges {
  readonly changes: ChangeSet;
  readonly condition: Condition;
}

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
export function checkpointWrite(
  held: Lease,
  holder: Holding,
  nextOffset: number,
  now: number,
  position: {
    readonly targetOffset: number | undefined;
    readonly source: SourcePosition | undefined;
    readonly producerIds?: readonly bigint[] | undefined;
  },
): ConditionalChanges {
  const changes = new ChangeSet();
  // lastProgressAt moves only with the checkpoint: it is how stalled partitions are found.
  if (checkpointAdvances(held, nextOffset))
    changes.with("checkpoint", nextOffset).with("lastProgressAt", now);
  changes.with("updatedAt", now);
  if (position.targetOffset !== undefined) {
    changes.with("targetOffset", position.targetOffset);
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
    changes.with("offsetMap", withPoint(held.offsetMap ?? [], point));
  }
  if (position.source !== undefined) withSource(changes, "checkpoint", position.source, nextOffset);
  if (position.producerIds !== undefined) changes.with("producerIds", producerIdList(position.producerIds));
  return { changes, condition: LeaseConditions.checkpoint({ ...held, ...holder }, nextOffset, now) };
}

/**
 * Producer ids a lease keeps (Lease.producerIds). Kafka gives a transactional id a new one only
 * when its epoch is exhausted (32,767 fences) or it expired unused (7 days by default), and the
 * list need only cover the copies past the stored target position: eight is years of changes.
 */
export const MAX_PRODUCER_IDS = 8;

/** `ids` with `id` added as the newest (if absent), the oldest dropped beyond MAX_PRODUCER_IDS. */
export function withProducerId(ids: readonly bigint[], id: bigint): readonly bigint[] {
  if (ids.includes(id)) return ids;
  return [...ids, id].slice(-MAX_PRODUCER_IDS);
}

function producerIdList(ids: readonly bigint[]): string[] {
  if (ids.length === 0 || ids.length > MAX_PRODUCER_IDS || ids.some((id) => id < 0n)) {
    throw invalidArgument(
      "checkpoint",
      "producerIds",
      ids.map(String),
      `1 to ${MAX_PRODUCER_IDS} non-negative producer ids`,
    );
  }
  return ids.map(String);
}

/** A reset of `held`'s checkpoint to `nextOffset` (backwards too), with its new positions. */
export function resetCheckpointWrite(
  held: Lease,
  holder: Holding,
  nextOffset: number,
  now: number,
  position: { readonly targetOffset: number | null; readonly source: SourcePosition },
): ConditionalChanges {
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
  const changes = new ChangeSet().with("checkpoint", nextOffset).with("updatedAt", now);
  // A position paired with the old checkpoint would point exactly-once recovery at records the
  // reset made meaningless, so without a new one the old one goes.
  // The offset map goes with it: its source offsets named records of the log that diverged.
  if (targetOffset === null) changes.without("targetOffset", "offsetMap");
  else
    changes
      .with("targetOffset", targetOffset)
      .with("offsetMap", [{ source: nextOffset, target: targetOffset }]);
  withSource(changes, operation, position.source, nextOffset, "reset");
  return { changes, condition: LeaseConditions.resetCheckpoint(holder, held.checkpoint, now) };
}

/**
 * Sets the source position. An unknown topic id (a cluster without ids) is kept as stored by a
 * checkpoint and removed by a reset (the old one describes the log the reset left). The epoch is
 * always the checkpointer's current one (Lease.sourceEpoch), null removing it, and goes with the
 * checkpoint it is stored with (`sourceEpochAt`, items.ts storedEpoch): an epoch paired with a
 * checkpoint it does not belong to is what made a clean leader change look like a truncation.
 */
function withSource(
  changes: ChangeSet,
  operation: string,
  source: SourcePosition,
  nextOffset: number,
  kind?: "reset",
): void {
  if (source.topicId === "") {
    throw invalidArgument(operation, "source.topicId", source.topicId, "a non-empty string or null");
  }
  if (source.leaderEpoch !== null) requireOffset(operation, "source.leaderEpoch", source.leaderEpoch);
  if (source.topicId !== null) changes.with("sourceTopicId", source.topicId);
  else if (kind === "reset") changes.without("sourceTopicId");
  if (source.leaderEpoch !== null)
    changes.with("sourceEpoch", source.leaderEpoch).with("sourceEpochAt", nextOffset);
  else changes.without("sourceEpoch", "sourceEpochAt");
}
