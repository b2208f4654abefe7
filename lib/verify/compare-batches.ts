/**
 * target.copy "batches": one source partition compared with its copy batch by batch. Each source
 * batch (fetchBatches) is held against the target's next data batch, which must be its copy: the
 * same record count, content CRC (SourceBatch.contentCrc, over everything but the fields a copy
 * rewrites, so equal CRCs mean equal bytes but for those) and largest timestamp. The first
 * difference is named by both offsets and classified as in records mode (compare-partition.ts):
 * a batch altered, missing from the target, duplicated in it, or extra. As there, the target is
 * expected to hold nothing but the copies (in batches mode the mirror is to be the target
 * partitions' only writer): another producer's batch is a difference, and its message names both
 * producer ids. Transaction markers and aborted batches are no data batches: READ_COMMITTED never
 * returns them.
 */
import type { SourceBatch, TopicPartition } from "../core/model.js";
import { BatchDigest, batchDifference, sameBatch } from "./digest.js";
import type { ClusterSide, Mismatch, OffsetRange, PartitionComparison } from "./model.js";
import { batchCursor, type PartitionCursor, walkInStep } from "./partition-cursor.js";

export async function compareBatches(
  source: ClusterSide,
  target: ClusterSide,
  tps: { readonly source: TopicPartition; readonly target: TopicPartition },
  ranges: { readonly source: OffsetRange; readonly target: OffsetRange },
): Promise<PartitionComparison> {
  const left = batchCursor(source.reader, tps.source, ranges.source);
  const right = batchCursor(target.reader, tps.target, ranges.target);
  const leftDigest = new BatchDigest();
  const rightDigest = new BatchDigest();
  /** The producer of the copies before the first difference. */
  let ours: bigint | null = null;
  const mismatch = await walkInStep(
    left,
    right,
    { left: leftDigest, right: rightDigest },
    (s, t, previous) => {
      if (s === undefined || t === undefined || !sameBatch(s, t))
        return classify({ s, t, previous, ours }, left, tps.source);
      ours ??= t.producerId;
      return Promise.resolve(null);
    },
  );
  return {
    source: tps.source,
    target: tps.target,
    sourceRange: ranges.source,
    targetRange: ranges.target,
    sourceRecords: leftDigest.records,
    targetRecords: rightDigest.records,
    sourceDigest: leftDigest.hex(),
    targetDigest: rightDigest.hex(),
    mismatch,
  };
}

/** The first difference: `previous` is the last source batch, `ours` the producer of the copies so far. */
async function classify(
  at: {
    readonly s: SourceBatch | undefined;
    readonly t: SourceBatch | undefined;
    readonly previous: SourceBatch | undefined;
    readonly ours: bigint | null;
  },
  left: PartitionCursor<SourceBatch>,
  tp: TopicPartition,
): Promise<Mismatch> {
  const { s, t, previous } = at;
  const where = `${tp.topic}/${tp.partition}`;
  if (t === undefined && s !== undefined) {
    const message = `${where}: source batch at offset ${s.baseOffset} and later are missing from the target`;
    return { kind: "missing", sourceOffset: s.baseOffset, targetOffset: null, message };
  }
  if (t === undefined) throw new Error("unreachable: both sides ended");
  const writer =
    at.ours === null || t.producerId === at.ours
      ? ""
      : ` (written by producer ${t.producerId}, the copies before it by ${at.ours})`;
  if (previous !== undefined && sameBatch(previous, t)) {
    const message = `${where}: source batch at offset ${previous.baseOffset} is duplicated in the target at offset ${t.baseOffset}`;
    return { kind: "duplicated", sourceOffset: previous.baseOffset, targetOffset: t.baseOffset, message };
  }
  if (s === undefined) {
    const message = `${where}: target batch at offset ${t.baseOffset} (${t.count} records) has no counterpart in the source${writer}`;
    return { kind: "extra", sourceOffset: null, targetOffset: t.baseOffset, message };
  }
  const after = await left.peek(1);
  if (after !== undefined && sameBatch(after, t)) {
    const message =
      `${where}: source batch at offset ${s.baseOffset} (${s.count} records) is missing from the target ` +
      `(target offset ${t.baseOffset} holds the copy of source batch at offset ${after.baseOffset})`;
    return { kind: "missing", sourceOffset: s.baseOffset, targetOffset: null, message };
  }
  const message =
    `${where}: source batch at offset ${s.baseOffset} differs from target batch at offset ${t.baseOffset}: ` +
    `${batchDifference(s, t)}${writer}`;
  return { kind: "altered", sourceOffset: s.baseOffset, targetOffset: t.baseOffset, message };
}
