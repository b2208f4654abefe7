/**
 * The offset checker's view of a mirror: one row per selected source partition with its lease
 * owner, checkpoint, source log end and lag. Pure: the command gathers leases and offsets.
 */
import { type PartitionOffsets, partitionKey } from "../core/model.js";
import type { Lease } from "../core/ports.js";

export interface StatusRow {
  readonly topic: string;
  readonly partition: number;
  /** Holder of an unexpired lease, or null. */
  readonly owner: string | null;
  /**
   * The lease item's owner, expired or not (a worker that died keeps its name there until its
   * lease expires and someone claims it); null when free or released.
   */
  readonly heldBy: string | null;
  /** Epoch ms at which `heldBy`'s lease expires (or expired); null when nobody holds it. */
  readonly expiresAt: number | null;
  readonly checkpoint: number | null;
  readonly logStart: number;
  readonly logEnd: number;
  /** Records not yet copied: from the checkpoint (or where the first copy starts) to the log end. */
  readonly lag: number;
  /** Epoch ms of the last checkpoint that advanced, or null. */
  readonly lastProgressAt: number | null;
}

export function statusRows(
  topics: readonly { name: string; offsets: readonly PartitionOffsets[] }[],
  leases: readonly Lease[],
  startFrom: "earliest" | "latest",
  now: number,
): StatusRow[] {
  const byKey = new Map(leases.map((l) => [partitionKey(l), l]));
  const rows: StatusRow[] = [];
  for (const topic of topics) {
    for (const o of [...topic.offsets].sort((a, b) => a.partition - b.partition)) {
      const lease = byKey.get(partitionKey({ topic: topic.name, partition: o.partition }));
      const checkpoint = lease?.checkpoint ?? null;
      // Without a checkpoint the first copy starts at the log start, or at the end for "latest".
      const from = checkpoint ?? (startFrom === "earliest" ? o.logStartOffset : o.logEndOffset);
      rows.push({
        topic: topic.name,
        partition: o.partition,
        owner: lease?.owner != null && lease.expiresAt > now ? lease.owner : null,
        heldBy: lease?.owner ?? null,
        expiresAt: lease?.owner != null ? lease.expiresAt : null,
        checkpoint,
        logStart: o.logStartOffset,
        logEnd: o.logEndOffset,
        lag: Math.max(0, o.logEndOffset - Math.max(from, o.logStartOffset)),
        lastProgressAt: lease?.lastProgressAt ?? null,
      });
    }
  }
  return rows;
}
