/**
 * Compares one source partition with its copy: record counts, offset ranges, a digest of each
 * side, and the first place they differ, named by its offsets and classified (a record altered,
 * missing from the target, duplicated in it, or extra).
 *
 * Both sides are read from the same starting offset: kafka-mirror writes source partition N to
 * target partition N in order, so when it filled an empty target the offsets line up. A target
 * that held records before mirroring began does not line up, and verify says so at its first record.
 */
import type { MirrorRecord, TopicPartition } from "../core/model.js";
import type { ClusterAdmin, SourceReader } from "../core/ports.js";
import { RecordDigest, sameContent } from "./digest.js";
import { PartitionCursor } from "./partition-cursor.js";

/**
 * One cluster's reader and admin. Verify makes no retries of its own: pass retrying ones
 * (retryingAdmin, retryingReader, with the command's deadline) so a broker that blinks does not
 * fail the comparison; each adapter call is a single attempt.
 */
export interface ClusterSide {
  readonly reader: SourceReader;
  readonly admin: ClusterAdmin;
}

export type MismatchKind = "altered" | "missing" | "duplicated" | "extra";

export interface Mismatch {
  readonly kind: MismatchKind;
  /** Offset of the source record concerned, or null when the source has no record there. */
  readonly sourceOffset: number | null;
  /** Offset of the target record concerned, or null when the target has no record there. */
  readonly targetOffset: number | null;
  readonly message: string;
}

export interface OffsetRange {
  /** First offset compared. */
  readonly from: number;
  /** One past the last offset compared (the log end when the comparison started). */
  readonly to: number;
}

export interface PartitionComparison {
  readonly source: TopicPartition;
  readonly target: TopicPartition;
  readonly sourceRange: OffsetRange;
  readonly targetRange: OffsetRange;
  readonly sourceRecords: number;
  readonly targetRecords: number;
  readonly sourceDigest: string;
  readonly targetDigest: string;
  /** The first difference, or null when both sides hold the same records in the same order. */
  readonly mismatch: Mismatch | null;
}

export interface CompareOptions {
  /** Compare from this offset on both sides instead of each log's start. */
  readonly fromOffset?: number;
  /**
   * Key of the header the mirror appends to every copy (provenance). A target record whose last
   * header has this key is compared without it: the source record never had it.
   */
  readonly mirrorHeader?: Buffer;
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
  const left = new PartitionCursor(source.reader, sourceTp, sourceRange.from, sourceRange.to);
  const right = new PartitionCursor(
    target.reader,
    targetTp,
    targetRange.from,
    targetRange.to,
    mirrorHeader === undefined ? undefined : (r) => withoutMirrorHeader(r, mirrorHeader),
  );
  const leftDigest = new RecordDigest();
  const rightDigest = new RecordDigest();
  let mismatch: Mismatch | null = null;
  let previous: MirrorRecord | undefined;

  for (;;) {
    const s = await left.peek();
    const t = await right.peek();
    if (s === undefined && t === undefined) break;
    if (mismatch === null && (s === undefined || t === undefined || !sameContent(s, t))) {
      mismatch = await classify(s, t, previous, left, sourceTp);
    }
    if (s !== undefined) leftDigest.add(s);
    if (t !== undefined) rightDigest.add(t);
    previous = s ?? previous;
    await left.next();
    await right.next();
  }
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
  left: PartitionCursor,
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
