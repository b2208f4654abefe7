/**
 * Kafka record batches (magic v2) to and from MirrorRecords, byte for byte: keys, values, header
 * keys and header values stay Buffers (views into the fetched or decompressed bytes), null stays
 * null, headers keep their order and repeats. kafkajs decodes headers into an object, which loses
 * interleaved repeats, so the replicator reads and writes batches itself. The batch header's layout
 * is in batch-header.ts.
 */

import type { CompressionCodec } from "../../config/compression.js";
import type { MirrorRecord, RecordHeader } from "../../core/model.js";
import { type ProvenanceStamp, STAMP_OFFSET_BYTES } from "../../core/provenance.js";
import { ReplicatorError } from "../../errors.js";
import {
  ATTRIBUTES_OFFSET,
  CODEC_MASK,
  CONTROL_FLAG,
  CRC_OFFSET,
  CURRENT_MAGIC,
  checkedBaseOffset,
  corrupt,
  HEADER_SIZE,
  LOG_APPEND_TIME_FLAG,
  LOG_OVERHEAD,
  MAGIC_OFFSET,
  NO_PARTITION_LEADER_EPOCH,
  readSafeInt64,
  recordSetEntries,
  TRANSACTIONAL_FLAG,
} from "./batch-header.js";
import { CODECS, codecFromId, compress, decompress } from "./compression.js";
import { crc32c } from "./crc32c.js";
import { decodeLegacyEntry } from "./legacy-message-set.js";
import type { ControlType, DecodedBatch } from "./model.js";
import { ByteReader, sizeOfVarint, sizeOfVarlong, writeVarint, writeVarlong } from "./varint.js";

const CONTROL_TYPE_ABORT = 0;
const CONTROL_TYPE_COMMIT = 1;

const NO_HEADERS: readonly RecordHeader[] = Object.freeze([]);

export interface EncodeOptions {
  compression: CompressionCodec;
  producerId: bigint;
  producerEpoch: number;
  baseSequence: number;
  /**
   * Marks the batch as part of a transaction (attributes bit 4): a read_committed consumer then
   * hides it until the transaction's COMMIT marker, and drops it on ABORT. @default false
   */
  isTransactional?: boolean;
  /** Our provenance header, written after every record's own headers. @default none */
  stamp?: ProvenanceStamp | null;
  /**
   * Bytes left free in front of the batch in the returned buffer, for the request around it, so
   * the batch is laid out where it is sent from and never copied. @default 0
   */
  headroom?: number;
}

function writeInt64(buf: Buffer, pos: number, value: number): void {
  buf.writeBigInt64BE(BigInt(value), pos);
}

/**
 * Decodes every complete batch in a Fetch response's record set; an entry whose magic (byte 16)
 * is 0 or 1 is a legacy message, decoded by legacy-message-set.ts. A truncated trailing batch is
 * ignored (the broker may cut the last one at maxBytes). Throws ReplicatorError CORRUPT_BATCH on
 * a CRC mismatch, an unknown codec or magic, or a malformed record.
 */
export async function decodeRecordBatches(data: Buffer): Promise<DecodedBatch[]> {
  const batches: DecodedBatch[] = [];
  for (const entry of recordSetEntries(data)) {
    const magic = entry.length > MAGIC_OFFSET ? entry[MAGIC_OFFSET] : undefined;
    const legacy = magic === 0 || magic === 1;
    batches.push(await (legacy ? decodeLegacyEntry : decodeBatch)(entry, 0, entry.length));
  }
  return batches;
}

/**
 * The v2 batch `data[start, start + size)`, its CRC checked, records decoded (views into `data` or
 * its decompressed block).
 */
export async function decodeBatch(data: Buffer, start: number, size: number): Promise<DecodedBatch> {
  const end = start + size;
  const baseOffset = checkedBaseOffset(data, start, size);
  const attributes = data.readInt16BE(start + 21);
  const lastOffsetDelta = data.readInt32BE(start + 23);
  const baseTimestamp = readSafeInt64(data, start + 27, "baseTimestamp");
  const maxTimestamp = readSafeInt64(data, start + 35, "maxTimestamp");
  const producerId = data.readBigInt64BE(start + 43);
  const producerEpoch = data.readInt16BE(start + 51);
  const baseSequence = data.readInt32BE(start + 53);
  const recordCount = data.readInt32BE(start + 57);
  const lastOffset = baseOffset + lastOffsetDelta;
  if (!Number.isSafeInteger(lastOffset)) throw corrupt("lastOffset beyond Number.MAX_SAFE_INTEGER");
  if (recordCount < 0) throw corrupt("negative record count", { baseOffset, recordCount });

  const codecId = attributes & CODEC_MASK;
  const codec = codecFromId(codecId);
  if (codec === undefined) throw corrupt(`unknown compression codec id ${codecId}`, { baseOffset, codecId });
  const isControl = (attributes & CONTROL_FLAG) !== 0;

  let records = data;
  let recordsStart = start + HEADER_SIZE;
  let recordsEnd = end;
  if (codec !== "none") {
    try {
      records = await decompress(codec, data.subarray(recordsStart, end));
    } catch (error) {
      if (error instanceof ReplicatorError) error.details.baseOffset = baseOffset;
      throw error;
    }
    recordsStart = 0;
    recordsEnd = records.length;
  }

  const reader = new ByteReader(records, recordsStart, recordsEnd);
  const logAppendTimestamp = (attributes & LOG_APPEND_TIME_FLAG) !== 0 ? maxTimestamp : null;
  return {
    baseOffset,
    lastOffset,
    leaderEpoch: data.readInt32BE(start + 12),
    producerId,
    producerEpoch,
    baseSequence,
    isTransactional: (attributes & TRANSACTIONAL_FLAG) !== 0,
    isControl,
    controlType: isControl ? readControlType(reader, recordCount, baseOffset) : null,
    records: isControl ? [] : readRecords(reader, recordCount, baseOffset, logAppendTimestamp, baseTimestamp),
    sizeInBytes: size,
  };
}

function readRecords(
  reader: ByteReader,
  count: number,
  baseOffset: number,
  logAppendTimestamp: number | null,
  baseTimestamp: number,
): MirrorRecord[] {
  const records: MirrorRecord[] = [];
  const batchEnd = reader.end;
  for (let i = 0; i < count; i++) {
    const length = reader.varint();
    const recordEnd = reader.pos + length;
    if (length < 0 || recordEnd > batchEnd)
      throw corrupt("record runs past the end of its batch", { baseOffset });
    reader.end = recordEnd;
    reader.pos++; // record attributes: unused since 0.11
    const timestampDelta = reader.varlong();
    const offset = baseOffset + reader.varint();
    const key = reader.nullableBytes();
    const value = reader.nullableBytes();
    const headerCount = reader.varint();
    let headers = NO_HEADERS;
    if (headerCount !== 0) {
      if (headerCount < 0) throw corrupt("negative header count", { baseOffset, offset });
      const list: RecordHeader[] = [];
      for (let h = 0; h < headerCount; h++) {
        const keyLength = reader.varint();
        if (keyLength < 0) throw corrupt("null header key", { baseOffset, offset });
        const headerKey = reader.take(keyLength);
        list.push({ key: headerKey, value: reader.nullableBytes() });
      }
      headers = list;
    }
    if (reader.pos !== recordEnd)
      throw corrupt("record length does not match its fields", { baseOffset, offset });
    reader.end = batchEnd;
    const timestamp = logAppendTimestamp ?? baseTimestamp + timestampDelta;
    if (!Number.isSafeInteger(timestamp) || offset > Number.MAX_SAFE_INTEGER) {
      throw corrupt("record offset or timestamp beyond Number.MAX_SAFE_INTEGER", { baseOffset });
    }
    records.push({ offset, timestamp, key, value, headers });
  }
  if (reader.pos !== batchEnd) throw corrupt("bytes left after the batch's declared records", { baseOffset });
  return records;
}

/** A control batch holds one record whose key is (version int16, type int16). */
function readControlType(reader: ByteReader, count: number, baseOffset: number): ControlType {
  if (count < 1) throw corrupt("control batch without a control record", { baseOffset });
  const length = reader.varint();
  const recordEnd = reader.pos + length;
  if (length < 0 || recordEnd > reader.end)
    throw corrupt("control record runs past its batch", { baseOffset });
  reader.end = recordEnd;
  reader.pos++;
  reader.varlong();
  reader.varint();
  const key = reader.nullableBytes();
  if (key === null || key.length < 4) throw corrupt("control record key too short", { baseOffset });
  const type = key.readInt16BE(2);
  if (type === CONTROL_TYPE_ABORT) return "abort";
  if (type === CONTROL_TYPE_COMMIT) return "commit";
  return "other";
}

function sizeOfBytes(bytes: Buffer | null): number {
  return bytes === null ? 1 : sizeOfVarint(bytes.length) + bytes.length;
}

function writeBytes(buf: Buffer, pos: number, bytes: Buffer | null): number {
  if (bytes === null) return writeVarint(buf, pos, -1);
  const at = writeVarint(buf, pos, bytes.length);
  buf.set(bytes, at);
  return at + bytes.length;
}

function timestampDelta(timestamp: number, baseTimestamp: number): number {
  const delta = timestamp - baseTimestamp;
  if (!Number.isSafeInteger(timestamp) || !Number.isSafeInteger(delta)) {
    throw new RangeError("record timestamps must be safe integers less than 2^53 ms apart");
  }
  return delta;
}

/**
 * One magic-v2 batch: CreateTime timestamps (the first record's is the base), transactional only
 * when `options.isTransactional`, offsets relative from 0, partitionLeaderEpoch -1 (as producers send it). Records are written
 * straight into one buffer sized beforehand; only a compressed batch needs a second buffer. The
 * result holds `options.headroom` free bytes, then the batch.
 */
export async function encodeRecordBatch(
  records: readonly MirrorRecord[],
  options: EncodeOptions,
): Promise<Buffer> {
  const [first] = records;
  if (first === undefined) throw new RangeError("a record batch needs at least one record");
  const count = records.length;
  const stamp = options.stamp ?? null;
  const headroom = options.headroom ?? 0;
  const { bodySizes, recordsSize, maxTimestamp } = measureRecords(records, first.timestamp, stamp);
  const baseTimestamp = first.timestamp;

  const codec = options.compression;
  let batch: Buffer;
  if (codec === "none") {
    batch = Buffer.allocUnsafe(headroom + HEADER_SIZE + recordsSize);
    writeRecords(batch, headroom + HEADER_SIZE, records, bodySizes, baseTimestamp, stamp);
  } else {
    const plain = Buffer.allocUnsafe(recordsSize);
    writeRecords(plain, 0, records, bodySizes, baseTimestamp, stamp);
    const compressed = await compress(codec, plain);
    batch = Buffer.allocUnsafe(headroom + HEADER_SIZE + compressed.length);
    compressed.copy(batch, headroom + HEADER_SIZE);
  }

  const at = headroom;
  writeInt64(batch, at, 0);
  batch.writeInt32BE(batch.length - headroom - LOG_OVERHEAD, at + 8);
  batch.writeInt32BE(NO_PARTITION_LEADER_EPOCH, at + 12);
  batch.writeInt8(CURRENT_MAGIC, at + MAGIC_OFFSET);
  const attributes = CODECS[codec].id | (options.isTransactional === true ? TRANSACTIONAL_FLAG : 0);
  batch.writeInt16BE(attributes, at + ATTRIBUTES_OFFSET);
  batch.writeInt32BE(count - 1, at + 23);
  writeInt64(batch, at + 27, baseTimestamp);
  writeInt64(batch, at + 35, maxTimestamp);
  batch.writeBigInt64BE(options.producerId, at + 43);
  batch.writeInt16BE(options.producerEpoch, at + 51);
  batch.writeInt32BE(options.baseSequence, at + 53);
  batch.writeInt32BE(count, at + 57);
  batch.writeUInt32BE(crc32c(batch, at + ATTRIBUTES_OFFSET, batch.length), at + CRC_OFFSET);
  return batch;
}

/** Each record's body size (its length prefix excluded), their total with prefixes, the max timestamp. */
function measureRecords(
  records: readonly MirrorRecord[],
  baseTimestamp: number,
  stamp: ProvenanceStamp | null,
): { bodySizes: Int32Array; recordsSize: number; maxTimestamp: number } {
  const stampSize =
    stamp === null
      ? 0
      : sizeOfBytes(stamp.key) +
        sizeOfVarint(stamp.prefix.length + STAMP_OFFSET_BYTES) +
        stamp.prefix.length +
        STAMP_OFFSET_BYTES;
  let maxTimestamp = baseTimestamp;
  const bodySizes = new Int32Array(records.length);
  let recordsSize = 0;
  for (let i = 0; i < records.length; i++) {
    const record = records[i] as MirrorRecord;
    if (record.timestamp > maxTimestamp) maxTimestamp = record.timestamp;
    const headerCount = record.headers.length + (stamp === null ? 0 : 1);
    let body =
      1 +
      sizeOfVarlong(timestampDelta(record.timestamp, baseTimestamp)) +
      sizeOfVarint(i) +
      sizeOfBytes(record.key) +
      sizeOfBytes(record.value) +
      sizeOfVarint(headerCount) +
      stampSize;
    for (const header of record.headers) body += sizeOfBytes(header.key) + sizeOfBytes(header.value);
    bodySizes[i] = body;
    recordsSize += sizeOfVarint(body) + body;
  }
  return { bodySizes, recordsSize, maxTimestamp };
}

function writeRecords(
  buf: Buffer,
  start: number,
  records: readonly MirrorRecord[],
  bodySizes: Int32Array,
  baseTimestamp: number,
  stamp: ProvenanceStamp | null,
): void {
  let pos = start;
  const stampValueLength = stamp === null ? 0 : stamp.prefix.length + STAMP_OFFSET_BYTES;
  for (let i = 0; i < records.length; i++) {
    const record = records[i] as MirrorRecord;
    pos = writeVarint(buf, pos, bodySizes[i] as number);
    buf[pos++] = 0; // record attributes
    pos = writeVarlong(buf, pos, record.timestamp - baseTimestamp);
    pos = writeVarint(buf, pos, i);
    pos = writeBytes(buf, pos, record.key);
    pos = writeBytes(buf, pos, record.value);
    pos = writeVarint(buf, pos, record.headers.length + (stamp === null ? 0 : 1));
    for (const header of record.headers) {
      pos = writeBytes(buf, pos, header.key);
      pos = writeBytes(buf, pos, header.value);
    }
    if (stamp !== null) {
      pos = writeBytes(buf, pos, stamp.key);
      pos = writeVarint(buf, pos, stampValueLength);
      buf.set(stamp.prefix, pos);
      pos += stamp.prefix.length;
      // The source offset as int64 without a BigInt per record: offsets are safe integers >= 0.
      pos = buf.writeUInt32BE(Math.floor(record.offset / 0x100000000), pos);
      pos = buf.writeUInt32BE(record.offset >>> 0, pos);
    }
  }
}
