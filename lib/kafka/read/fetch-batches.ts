/**
 * slicePartition's counterpart for target.copy "batches": the data batches of one fetched
 * partition from the requested offset on as source batches (codec/pass-through.ts), and the offset
 * to read next. A batch is never split: the limits stop the slice before a batch that would pass
 * them, unless it is the first of the fetch. nextOffset and epochs are slicePartition's: past
 * control batches, aborted transactions and compaction gaps, epochs of every batch covered.
 * Read with CrcCheck "write", every batch not handed on as it came has its CRC checked here or in
 * sourceBatchOf; the target's broker checks those handed on when they are written, and a refusal
 * ends the write, so nothing at or past a corrupted batch is committed on what its header said.
 */
import type { CompressionCodec } from "../../config/compression.js";
import type { SourceBatch } from "../../core/model.js";
import { checkScannedCrc, type ScannedBatch, sourceBatchOf } from "../codec/pass-through.js";
import { epochsOf, type Slice, type SliceRoom } from "./fetch-result.js";

/**
 * @param all every complete entry the broker returned, in offset order.
 * @param aborted per entry of `all`: it belongs to an aborted transaction (read_committed).
 * @param codec target.compression: each batch in it (sourceBatchOf); undefined: in its own.
 */
export async function sliceBatches(
  all: readonly ScannedBatch[],
  aborted: readonly boolean[],
  offset: number,
  room: SliceRoom,
  codec?: CompressionCodec,
): Promise<Slice<SourceBatch>> {
  const units: SourceBatch[] = [];
  let records = 0;
  let bytes = 0;
  let nextOffset: number | null = null;
  for (const [i, batch] of all.entries()) {
    if (batch.isControl) continue; // decoded, so checked
    if (aborted[i] === true || batch.lastOffset < offset) {
      // Dropped on its header's word, which only a checked CRC vouches for.
      checkScannedCrc(batch);
      continue;
    }
    const unit = await sourceBatchOf(batch, offset, codec);
    if (unit === null) continue;
    const fits = records + unit.count <= room.maxRecords && bytes + unit.bytes.length <= room.maxBytes;
    if (!fits && (units.length > 0 || !room.first)) {
      nextOffset = unit.baseOffset;
      break;
    }
    units.push(unit);
    records += unit.count;
    bytes += unit.bytes.length;
  }
  const last = all.at(-1);
  // As slicePartition: one past the last batch, over control batches and compaction gaps.
  nextOffset ??= last === undefined ? offset : Math.max(offset, last.lastOffset + 1);
  return { units, records, nextOffset, bytes, epochs: epochsOf(all, offset, nextOffset) };
}
