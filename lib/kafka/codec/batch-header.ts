/**
 * The header of a Kafka record batch (magic v2), shared by the decoder and encoder
 * (record-batch.ts) and by pass-through (pass-through.ts), which reads and rewrites headers
 * without touching the records.
 *
 * Batch layout (DefaultRecordBatch.java):
 *   0 baseOffset int64 | 8 batchLength int32 | 12 partitionLeaderEpoch int32 | 16 magic int8
 *   17 crc uint32 (CRC-32C of bytes 21..end) | 21 attributes int16 | 23 lastOffsetDelta int32
 *   27 baseTimestamp int64 | 35 maxTimestamp int64 | 43 producerId int64 | 51 producerEpoch int16
 *   53 baseSequence int32 | 57 recordCount int32 | 61 records (compressed as one block, if any)
 * Attributes: bits 0-2 codec, bit 3 LogAppendTime, bit 4 transactional, bit 5 control.
 */
import { ReplicatorError } from "../../errors.js";
import { crc32c } from "./crc32c.js";

/** baseOffset + batchLength: the bytes batchLength does not count. */
export const LOG_OVERHEAD = 12;
export const HEADER_SIZE = 61;

export const BATCH_LENGTH_OFFSET = 8;
export const PARTITION_LEADER_EPOCH_OFFSET = 12;
export const MAGIC_OFFSET = 16;
export const CRC_OFFSET = 17;
/** Where the CRC-32C's region begins. */
export const ATTRIBUTES_OFFSET = 21;
export const LAST_OFFSET_DELTA_OFFSET = 23;
export const BASE_TIMESTAMP_OFFSET = 27;
export const MAX_TIMESTAMP_OFFSET = 35;
export const PRODUCER_ID_OFFSET = 43;
export const PRODUCER_EPOCH_OFFSET = 51;
export const BASE_SEQUENCE_OFFSET = 53;
export const RECORD_COUNT_OFFSET = 57;

export const CURRENT_MAGIC = 2;
export const NO_PARTITION_LEADER_EPOCH = -1;

export const CODEC_MASK = 0x07;
export const LOG_APPEND_TIME_FLAG = 0x08;
export const TRANSACTIONAL_FLAG = 0x10;
export const CONTROL_FLAG = 0x20;

export function corrupt(message: string, details: Record<string, unknown> = {}): ReplicatorError {
  return new ReplicatorError("CORRUPT_BATCH", message, { details });
}

/** A signed int64 as a number; throws CORRUPT_BATCH rather than round beyond 2^53. */
export function readSafeInt64(buf: Buffer, pos: number, field: string): number {
  const high = buf.readInt32BE(pos);
  const value = high * 0x100000000 + buf.readUInt32BE(pos + 4);
  if (high >= 0x200000 || high < -0x200000 || !Number.isSafeInteger(value)) {
    throw corrupt(`${field} beyond Number.MAX_SAFE_INTEGER`, { field });
  }
  return value;
}

/** The batch's baseOffset, once its size, magic and CRC are those of a sound v2 batch. */
export function checkedBaseOffset(data: Buffer, start: number, size: number): number {
  const baseOffset = headerBaseOffset(data, start, size);
  checkBatchCrc(data, start, size, baseOffset);
  return baseOffset;
}

/** The batch's baseOffset, once its size and magic are those of a v2 batch; its CRC not checked. */
export function headerBaseOffset(data: Buffer, start: number, size: number): number {
  const baseOffset = readSafeInt64(data, start, "baseOffset");
  if (size < HEADER_SIZE) throw corrupt("record batch shorter than its header", { baseOffset, size });
  const magic = data.readInt8(start + MAGIC_OFFSET);
  if (magic !== CURRENT_MAGIC) throw corrupt(`unknown record batch magic ${magic}`, { baseOffset, magic });
  return baseOffset;
}

/** Throws CORRUPT_BATCH unless the v2 batch's stored CRC-32C is that of its bytes. */
export function checkBatchCrc(data: Buffer, start: number, size: number, baseOffset: number): void {
  const expectedCrc = data.readUInt32BE(start + CRC_OFFSET);
  const actualCrc = crc32c(data, start + ATTRIBUTES_OFFSET, start + size);
  if (expectedCrc !== actualCrc) {
    throw corrupt("record batch CRC mismatch", { baseOffset, expectedCrc, actualCrc });
  }
}

/**
 * The complete entries (v2 batches or legacy messages) of a Fetch response's record set, each a
 * view from its baseOffset field to its end. A truncated trailing entry is left out: the broker
 * may cut the last one at maxBytes.
 */
export function* recordSetEntries(data: Buffer): Generator<Buffer> {
  let pos = 0;
  while (pos + LOG_OVERHEAD <= data.length) {
    const batchLength = data.readInt32BE(pos + 8);
    if (batchLength < 0) throw corrupt("negative record batch length", { batchLength });
    const size = LOG_OVERHEAD + batchLength;
    if (pos + size > data.length) return;
    yield data.subarray(pos, pos + size);
    pos += size;
  }
}
