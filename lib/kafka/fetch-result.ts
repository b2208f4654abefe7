/**
 * Turns the record batches of one fetched partition into what the core sees: data records from the
 * requested offset on, at most `maxRecords` of them, and the offset to read next.
 */
import type { MirrorRecord } from "../core/model.js";

/** The parts of a decoded record batch this step needs (lib/kafka/record-batch.ts's DecodedBatch). */
export interface BatchView {
  readonly baseOffset: number;
  readonly lastOffset: number;
  readonly isControl: boolean;
  readonly records: readonly MirrorRecord[];
}

export interface PartitionSlice {
  readonly records: MirrorRecord[];
  readonly nextOffset: number;
  readonly bytes: number;
}

/**
 * @param all every complete batch the broker returned, in offset order (before aborted
 *   transactions are removed), so `nextOffset` steps over aborted and control batches too.
 * @param visible the same batches after aborted transactions were removed.
 */
export function slicePartition(
  all: readonly BatchView[],
  visible: readonly BatchView[],
  offset: number,
  maxRecords: number,
): PartitionSlice {
  const records: MirrorRecord[] = [];
  let bytes = 0;
  for (const batch of visible) {
    if (batch.isControl) continue;
    for (const record of batch.records) {
      // Kafka returns whole batches: records before the requested offset were already read.
      if (record.offset < offset) continue;
      if (records.length >= maxRecords) return { records, nextOffset: record.offset, bytes };
      records.push(record);
      bytes += recordBytes(record);
    }
  }
  const last = all.at(-1);
  // One past the last batch, which covers control records and offsets removed by compaction.
  const nextOffset = last === undefined ? offset : Math.max(offset, last.lastOffset + 1);
  return { records, nextOffset, bytes };
}

export function recordBytes(record: MirrorRecord): number {
  let size = (record.key?.length ?? 0) + (record.value?.length ?? 0);
  for (const header of record.headers) size += header.key.length + (header.value?.length ?? 0);
  return size;
}
