/**
 * Compares one source partition with its copy: record counts, offset ranges, a digest of each
 * side, and the first place they differ, named by its offsets and classified (a record altered,
 * missing from the target, duplicated in it, or extra). In target.copy "batches" it compares
 * batch by batch instead (compare-batches.ts), reporting the same way.
 *
 * Both sides are read from the same starting offset: kafka-mirror writes source partition N to
 * target partition N in order, so when it filled an empty target the offsets line up. A target
 * that held records before mirroring began does not line up, and verify says so at its first record.
 */
import type { CopyMode, MirrorRecord, TopicPartition } from "../core/model.js";
import type { ClusterAdmin } from "../core/ports.js";
import { compareBatches } from "./compare-batches.js";
import { RecordDigest, sameContent } from "./digest.js";
import type { ClusterSide, Mismatch, OffsetRange, PartitionComparison } from "./model.js";
import { type PartitionCursor, recordCursor, walkInStep } from "./partition-cursor.js";

export type {
  ClusterSide,
  Mismatch,
  MismatchKind,
  OffsetRange,
  PartitionComparison,
} from "./model.js";

export interface CompareOptions {
  /** Compare from this offset on both sides instead of each log's start. */
  readonly fromOffset?: number;
  /**
   * Key of the header the mirror appends to every copy (provenance). A target record whose last
   * header has this key is compared without it: the source record never had it.
   */
  readonly mirrorHeader?: Buffer;
  /** target.copy: "batches" compares each source batch with its copy (compare-batches.ts). @default "records" */
  readonly copy?: CopyMode;
}

export async function comparePartition(
  source: ClusterSide,
  target: ClusterSide,
  sourceTp: TopicPartition,
  targetTp: TopicPartition,
  options: CompareOptions = {},
): Promise<PartitionComparison> {
  const { fromOffset, mirrorHeader } = options;
  const [sourceRange, targetRange] = await Promise.all([
    rangeOf(source.admin, sourceTp, fromOffset),
    rangeOf(target.admin, targetTp, fromOffset),
  ]);
  const ranges = { source: sourceRange, target: targetRange };
  if (options.copy === "batches")
    return compareBatches(source, target, { source: sourceTp, target: targetTp }, ranges);
  const left = recordCursor(source.reader, sourceTp, sourceRange);
  const right = recordCursor(
    target.reader,
    targetTp,
    targetRange,
    mirrorHeader === undefined ? undefined : (r) => withoutMirrorHeader(r, mirrorHeader),
  );
  const leftDigest = new RecordDigest();
  const rightDigest = new RecordDigest();
  const mismatch = await walkInStep(
    left,
    right,
    { left: leftDigest, right: rightDigest },
    (s, t, previous) =>
      s === undefined || t === undefined || !sameContent(s, t)
        ? classify(s, t, previous, left, sourceTp)
        : Promise.resolve(null),
  );
  return {
    source: sourceTp,
    target: targetTp,
    sourceRange,
    targetRange,
    sourceRecords: leftDigest.records,
    targetRecords: rightDigest.records,
    sourceDigest: leftDigest.hex(),
    targetDigest: rightDigest.hex(),
    mismatch,
  };
}

function withoutMirrorHeader(record: MirrorRecord, key: Buffer): MirrorRecord {
  const last = record.headers.at(-1);
  if (last === undefined || !last.key.equals(key)) return record;
  return { ...record, headers: record.headers.slice(0, -1) };
}

async function rangeOf(admin: ClusterAdmin, tp: TopicPartition, fromOffset?: number): Promise<OffsetRange> {
  const [offsets] = await admin.listOffsets(tp.topic, [tp.partition]);
  if (offsets === undefined) throw new Error(`no offsets returned for ${tp.topic}/${tp.partition}`);
  const from = Math.min(
    Math.max(fromOffset ?? offsets.logStartOffset, offsets.logStartOffset),
    offsets.logEndOffset,
  );
  return { from, to: offsets.logEndOffset };
}

/** Names the first difference; `previous` is the last record both sides agreed on. */
async function classify(
  s: MirrorRecord | undefined,
  t: MirrorRecord | undefined,
  previous: MirrorRecord | undefined,
  left: PartitionCursor<MirrorRecord>,
  tp: TopicPartition,
): Promise<Mismatch> {
  const where = `${tp.topic}/${tp.partition}`;
  if (t === undefined && s !== undefined) {
    return {
      kind: "missing",
      sourceOffset: s.offset,
      targetOffset: null,
      message: `${where}: source offset ${s.offset} and later are missing from the target`,
    };
  }
  if (t !== undefined && previous !== undefined && sameContent(t, previous)) {
    return {
      kind: "duplicated",
      sourceOffset: previous.offset,
      targetOffset: t.offset,
      message: `${where}: source offset ${previous.offset} is duplicated in the target at offset ${t.offset}`,
    };
  }
  if (t !== undefined && s === undefined) {
    return {
      kind: "extra",
      sourceOffset: null,
      targetOffset: t.offset,
      message: `${where}: target offset ${t.offset} has no counterpart in the source`,
    };
  }
  if (s !== undefined && t !== undefined) {
    const after = await left.peek(1);
    if (after !== undefined && sameContent(after, t)) {
      return {
        kind: "missing",
        sourceOffset: s.offset,
        targetOffset: null,
        message: `${where}: source offset ${s.offset} is missing from the target (target offset ${t.offset} holds source offset ${after.offset})`,
      };
    }
    return {
      kind: "altered",
      sourceOffset: s.offset,
      targetOffset: t.offset,
      message: `${where}: source offset ${s.offset} differs from target offset ${t.offset}`,
    };
  }
  throw new Error("unreachable: both sides ended");
}
