/**
 * Splits records into produce batches bounded by an upper estimate of their encoded size and by a
 * record count. The estimate is of the uncompressed v2 encoding, so compression only makes the
 * real batch smaller than the bound.
 */
import type { MirrorRecord } from "../../core/model.js";
import { type ProvenanceStamp, STAMP_OFFSET_BYTES } from "../../core/provenance.js";

/** Record batch v2 header: baseOffset .. records count. */
export const BATCH_OVERHEAD_BYTES = 61;
/** Upper bound of a record's varint fields: length, attributes, timestamp/offset deltas, key/value lengths, header count. */
const RECORD_OVERHEAD_BYTES = 5 + 1 + 10 + 5 + 5 + 5 + 5;
/** Upper bound of a header's two varint lengths. */
const HEADER_OVERHEAD_BYTES = 10;

export function estimateRecordSize(record: MirrorRecord, stamp: ProvenanceStamp | null = null): number {
  let size = RECORD_OVERHEAD_BYTES + (record.key?.length ?? 0) + (record.value?.length ?? 0);
  if (stamp !== null)
    size += HEADER_OVERHEAD_BYTES + stamp.key.length + stamp.prefix.length + STAMP_OFFSET_BYTES;
  for (const h of record.headers) size += HEADER_OVERHEAD_BYTES + h.key.length + (h.value?.length ?? 0);
  return size;
}

/**
 * Consecutive, non-empty slices of `records` in order. A record larger than `maxBytes` gets a batch
 * of its own (the broker then decides whether to take it).
 */
export function splitIntoBatches(
  records: readonly MirrorRecord[],
  maxBytes: number,
  maxRecords: number,
  /** The provenance header the writer adds to every record. */
  stamp: ProvenanceStamp | null = null,
): MirrorRecord[][] {
  const batches: MirrorRecord[][] = [];
  let current: MirrorRecord[] = [];
  let size = BATCH_OVERHEAD_BYTES;
  for (const record of records) {
    const recordSize = estimateRecordSize(record, stamp);
    if (current.length > 0 && (current.length >= maxRecords || size + recordSize > maxBytes)) {
      batches.push(current);
      current = [];
      size = BATCH_OVERHEAD_BYTES;
    }
    current.push(record);
    size += recordSize;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}
