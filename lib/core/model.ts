/**
 * The data the replicator moves. Bytes stay bytes: keys, values, header keys and header values
 * are Buffers end to end, so a record is copied exactly even when it is not valid UTF-8.
 */

export interface TopicPartition {
  readonly topic: string;
  readonly partition: number;
}

/**
 * The one string form of a topic partition, "topic:partition": map keys, and lease-table keys
 * use it. Unambiguous because Kafka topic names cannot contain ":".
 */
export function partitionKey(tp: TopicPartition): string {
  return `${tp.topic}:${tp.partition}`;
}

/** The partition a partitionKey names (topic names cannot hold ':'). */
export function parseKey(key: string): TopicPartition {
  const at = key.lastIndexOf(":");
  return { topic: key.slice(0, at), partition: Number(key.slice(at + 1)) };
}

export interface RecordHeader {
  /** Header keys are raw bytes: Kafka defines them as strings, but we never re-encode them. */
  readonly key: Buffer;
  /** `null` is a distinct value on the wire (length -1) and is preserved. */
  readonly value: Buffer | null;
}

/** One data record as read from a source partition. Headers keep their order and repeats. */
export interface MirrorRecord {
  /** Offset in the source partition. */
  readonly offset: number;
  /** Effective timestamp in ms since epoch (CreateTime, or the batch's LogAppendTime). */
  readonly timestamp: number;
  readonly key: Buffer | null;
  /** `null` is a tombstone and stays a tombstone. */
  readonly value: Buffer | null;
  readonly headers: readonly RecordHeader[];
}

/** The result of one fetch of one source partition. */
export interface FetchedRecords extends FetchProgress {
  /**
   * Data records at or after the requested offset, in offset order. Records below the requested
   * offset (Kafka returns whole batches), control records and records of aborted transactions
   * are already dropped.
   */
  readonly records: MirrorRecord[];
  /** Sum of key, value and header sizes of `records`. */
  readonly bytes: number;
}

/**
 * The result of one fetch for target.copy "batches" (SourceReader.fetchBatches): the same data
 * as FetchedRecords.records, as the source's batches.
 */
export interface FetchedBatches extends FetchProgress {
  /** Data batches at or after the requested offset, in offset order; dropped as for FetchedRecords. */
  readonly batches: SourceBatch[];
  /** Sum of the batches' sizes: the bytes as fetched, or the key, value and header sizes of decoded ones. */
  readonly bytes: number;
}

/**
 * One data batch of a source partition for target.copy "batches": written to the target as it
 * came, only its producer id, producer epoch, base sequence, transactional bit and CRC rewritten,
 * so the copy holds the same bytes (keys, values, headers, timestamps, offset deltas, compressed
 * payload). A batch the target would not take as it came, or that must not be copied whole, is
 * encoded again by the reader from the records it keeps: one that begins before the offset asked
 * for, one with compaction gaps (Kafka refuses a produced batch whose offset range is not its
 * record count), one with LogAppendTime timestamps, a magic 0/1 message set.
 */
export interface SourceBatch {
  /** Offset of its first data record. */
  readonly baseOffset: number;
  /** Offset of its last data record. */
  readonly lastOffset: number;
  /** Its data records; lastOffset - baseOffset + 1 unless compaction left gaps. */
  readonly count: number;
  /** Its largest record timestamp (ms since epoch). */
  readonly maxTimestamp: number;
  /** The producer that wrote it, -1n when none: a look at the target tells our copies from another writer's. */
  readonly producerId: bigint;
  /**
   * CRC-32C of the batch as it would be with producer id, producer epoch and base sequence -1
   * and the transactional bit clear: the same for a source batch and its copy, so a look at the
   * target matches copies to source batches without reading their records. Null when the reader
   * left it to be computed on demand (SourceReader.contentCrc): with target.compression set it is
   * that of the records uncompressed, which a batch passing as it came would be decompressed for
   * when only a look, a translation or verify compares it; and the worker's reader leaves the
   * batch's own CRC unchecked for the target's broker, so computing it checks that first.
   */
  readonly contentCrc: number | null;
  /** The batch (magic 2) from its baseOffset field to its end: as the source stored it, or encoded again. */
  readonly bytes: Buffer;
}

/** What FetchedRecords and FetchedBatches both say of how far a fetch got. */
export interface FetchProgress {
  /**
   * The next offset to read: one past the last offset covered by the returned batches, control
   * batches and compaction gaps included. Equal to the requested offset when nothing was read.
   * This is what gets checkpointed.
   */
  readonly nextOffset: number;
  /** Source high watermark at the time of the fetch (the log end a consumer can reach). */
  readonly highWatermark: number;
  /** Source log start offset at the time of the fetch, or -1 when the broker did not say. */
  readonly logStartOffset: number;
  /**
   * The partition leader epochs of the batches this fetch covered (control batches included), as
   * the offsets where each begins, in offset order: the first entry is at the requested offset,
   * one more per change of epoch before `nextOffset`, where the batch before it ended (a gap that
   * compaction left belongs to the newer epoch, as in Kafka's epoch cache). Epoch -1: batches
   * that carry none (magic 0/1). Empty or absent when nothing was read or the reader cannot tell.
   */
  readonly epochs?: readonly EpochStart[];
}

/** Where, within a fetch, the records of one leader epoch begin (FetchedRecords.epochs). */
export interface EpochStart {
  readonly offset: number;
  /** -1 when unknown (a magic 0/1 message set carries no leader epoch). */
  readonly epoch: number;
}

export interface FetchLimits {
  readonly maxRecords: number;
  readonly maxBytes: number;
  /** How long the broker may wait for data when the partition is caught up. */
  readonly maxWaitMs: number;
}

export interface TopicInfo {
  readonly name: string;
  readonly partitions: number;
}

export interface PartitionOffsets {
  readonly partition: number;
  /** Earliest offset still in the log. */
  readonly logStartOffset: number;
  /** High watermark: one past the last committed offset. */
  readonly logEndOffset: number;
}

export interface WriteResult {
  /** Offset the target assigned to the first record, or -1 when unknown (duplicate resend). */
  readonly baseOffset: number;
  /** Records the write was given. */
  readonly records: number;
  /**
   * How many leading records the target acknowledged. Less than `records` only when the write
   * stopped at a batch boundary because the rest could not finish before its deadline: the
   * records after them were never sent, so the outcome is certain (see TargetWriter.write).
   */
  readonly acknowledged: number;
}

/** Where a partition without a checkpoint starts: the log start or the log end. */
export type StartFrom = "earliest" | "latest";

/**
 * How a partition is copied (target.copy): "records" decodes every record and writes it with a
 * provenance header; "batches" passes the source's batches through (SourceBatch).
 */
export type CopyMode = "records" | "batches";

/** What one write copies: decoded records (target.copy "records") or source batches ("batches"). */
export type CopyUnits = readonly MirrorRecord[] | readonly SourceBatch[];

/** The units are source batches (an empty list reads as records: it copies nothing either way). */
export function isBatches(units: CopyUnits): units is readonly SourceBatch[] {
  const first = units[0];
  return first !== undefined && isBatch(first);
}

/** A unit of CopyUnits: a source batch, or else a record. */
export function isBatch(unit: MirrorRecord | SourceBatch): unit is SourceBatch {
  return "contentCrc" in unit;
}
