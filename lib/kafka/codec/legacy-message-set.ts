/**
 * Legacy message sets (magic 0 and 1, the formats before Kafka 0.11) to MirrorRecords. A log
 * written while a topic's message.format.version was below 0.11 keeps them, and a broker serves
 * them as stored, so a Fetch response can hold these entries before, after or between v2 batches.
 * Byte 16 of every entry is its magic, in either format: that is how record-batch.ts tells them
 * apart and hands an entry here.
 *
 * Entry layout (LegacyRecord.java):
 *   0 offset int64 | 8 messageSize int32 | 12 crc uint32 (CRC-32 IEEE of bytes 16..end)
 *   16 magic int8 | 17 attributes int8 (bits 0-2 codec; v1: bit 3 LogAppendTime)
 *   v1 only: 18 timestamp int64 | then key bytes, value bytes (int32 length, -1 = null)
 *
 * A compressed entry (a "wrapper") holds, as its value, a whole message set compressed with its
 * codec. Inner offsets: v1 wrappers carry relative inner offsets (0..n-1) and the wrapper's offset
 * is the LAST inner message's absolute offset (KIP-31); v0 wrappers carry absolute inner offsets.
 * Under LogAppendTime the wrapper's timestamp is every inner message's timestamp.
 */
import type { MirrorRecord } from "../../core/model.js";
import { ReplicatorError } from "../../errors.js";
import { codecFromId, decompress } from "./compression.js";
import { crc32 } from "./crc32.js";
import type { DecodedBatch } from "./model.js";

/** Kafka's NO_TIMESTAMP: what a v0 message (which has none) carries, as in Kafka's up-conversion. */
export const NO_TIMESTAMP = -1;

const LOG_OVERHEAD = 12; // offset + messageSize
const CRC_OFFSET = 12;
const MAGIC_OFFSET = 16;
const ATTRIBUTES_OFFSET = 17;
/** crc + magic + attributes + key length + value length; v1 adds an 8-byte timestamp. */
const MIN_MESSAGE_SIZE_V0 = 14;
const TIMESTAMP_SIZE = 8;
const CODEC_MASK = 0x07;
const LOG_APPEND_TIME_FLAG = 0x08;

interface LegacyMessage {
  readonly offset: number;
  readonly magic: number;
  readonly attributes: number;
  readonly timestamp: number;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
}

function corrupt(message: string, details: Record<string, unknown> = {}): ReplicatorError {
  return new ReplicatorError("CORRUPT_BATCH", message, { details });
}

function readSafeInt64(buf: Buffer, pos: number, field: string, offset?: number): number {
  const value = buf.readBigInt64BE(pos);
  if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw corrupt(`${field} beyond Number.MAX_SAFE_INTEGER`, { field, offset });
  }
  return Number(value);
}

/**
 * The legacy entry `data[start, start + size)` (size counts the offset and size fields), as a
 * DecodedBatch: baseOffset its first message's offset, lastOffset the entry's own offset. Throws
 * ReplicatorError CORRUPT_BATCH on a CRC mismatch, a malformed message, zstd or an unknown codec
 * (v0/v1 define none, gzip, snappy and lz4), nested compression, or inner messages whose magic or
 * offsets do not fit their wrapper.
 */
export async function decodeLegacyEntry(data: Buffer, start: number, size: number): Promise<DecodedBatch> {
  const entry = readMessage(data, start, size);
  const codecId = entry.attributes & CODEC_MASK;
  const records = codecId === 0 ? [toRecord(entry, entry.timestamp)] : await readWrapper(entry, codecId);
  const first = records[0];
  return {
    baseOffset: first === undefined ? entry.offset : first.offset,
    lastOffset: entry.offset,
    leaderEpoch: -1,
    producerId: -1n,
    producerEpoch: -1,
    baseSequence: -1,
    isTransactional: false,
    isControl: false,
    controlType: null,
    records,
    sizeInBytes: size,
  };
}

/** One message, its CRC checked; key and value are views into `data`. */
function readMessage(data: Buffer, start: number, size: number): LegacyMessage {
  const offset = readSafeInt64(data, start, "offset");
  const end = start + size;
  if (size < LOG_OVERHEAD + MIN_MESSAGE_SIZE_V0)
    throw corrupt("message shorter than its header", { offset, size });
  const magic = data.readInt8(start + MAGIC_OFFSET);
  if (magic !== 0 && magic !== 1) throw corrupt(`unknown message magic ${magic}`, { offset, magic });
  const expectedCrc = data.readUInt32BE(start + CRC_OFFSET);
  const actualCrc = crc32(data, start + MAGIC_OFFSET, end);
  if (expectedCrc !== actualCrc)
    throw corrupt("message CRC mismatch", { offset, magic, expectedCrc, actualCrc });
  const attributes = data.readInt8(start + ATTRIBUTES_OFFSET);
  let pos = start + ATTRIBUTES_OFFSET + 1;
  let timestamp = NO_TIMESTAMP;
  if (magic === 1) {
    if (size < LOG_OVERHEAD + MIN_MESSAGE_SIZE_V0 + TIMESTAMP_SIZE)
      throw corrupt("v1 message shorter than its header", { offset, size });
    timestamp = readSafeInt64(data, pos, "timestamp", offset);
    pos += TIMESTAMP_SIZE;
  }
  const key = readBytes(data, pos, end, offset);
  pos += 4 + (key?.length ?? 0);
  const value = readBytes(data, pos, end, offset);
  pos += 4 + (value?.length ?? 0);
  if (pos !== end) throw corrupt("message size does not match its fields", { offset });
  return { offset, magic, attributes, timestamp, key, value };
}

function readBytes(data: Buffer, pos: number, end: number, offset: number): Buffer | null {
  if (pos + 4 > end) throw corrupt("message field runs past the end of its message", { offset });
  const length = data.readInt32BE(pos);
  if (length === -1) return null;
  if (length < 0 || pos + 4 + length > end)
    throw corrupt("message field runs past the end of its message", { offset, length });
  return data.subarray(pos + 4, pos + 4 + length);
}

function toRecord(message: LegacyMessage, timestamp: number): MirrorRecord {
  return { offset: message.offset, timestamp, key: message.key, value: message.value, headers: [] };
}

/** The inner messages of a compressed wrapper, with absolute offsets and effective timestamps. */
async function readWrapper(wrapper: LegacyMessage, codecId: number): Promise<MirrorRecord[]> {
  const { offset, magic } = wrapper;
  const codec = codecFromId(codecId);
  // zstd (4) came with magic 2 (KIP-110); Kafka refuses it in older formats.
  if (codec === undefined || codec === "zstd" || codec === "none") {
    throw corrupt(`compression codec id ${codecId} is not allowed in message format v${magic}`, {
      offset,
      codecId,
      allowed: "0 none, 1 gzip, 2 snappy, 3 lz4",
    });
  }
  if (wrapper.value === null) throw corrupt("compressed message without a value", { offset });
  let inner: Buffer;
  try {
    // lz4: the v0 framing's wrong header checksum (KIP-57) is no concern, lz4.ts does not check it.
    inner = await decompress(codec, wrapper.value);
  } catch (error) {
    if (error instanceof ReplicatorError) error.details.offset = offset;
    throw error;
  }
  const messages = readInnerSet(inner, wrapper);
  const last = messages.at(-1);
  if (last === undefined) throw corrupt("compressed message holds no messages", { offset });
  // v1: inner offsets count from the wrapper's base; the wrapper's own offset is the last one's.
  const shift = magic === 1 ? offset - last.offset : 0;
  const appendTime = magic === 1 && (wrapper.attributes & LOG_APPEND_TIME_FLAG) !== 0;
  const records: MirrorRecord[] = [];
  let previous = -1;
  for (const message of messages) {
    const absolute = message.offset + shift;
    if (absolute <= previous || absolute > offset || absolute < 0) {
      throw corrupt("inner message offsets do not fit their wrapper", {
        offset,
        innerOffset: message.offset,
      });
    }
    previous = absolute;
    records.push({
      ...toRecord(message, appendTime ? wrapper.timestamp : message.timestamp),
      offset: absolute,
    });
  }
  return records;
}

/** Every message of a decompressed inner set: whole, uncompressed, of the wrapper's magic. */
function readInnerSet(inner: Buffer, wrapper: LegacyMessage): LegacyMessage[] {
  const messages: LegacyMessage[] = [];
  let pos = 0;
  while (pos < inner.length) {
    if (pos + LOG_OVERHEAD > inner.length)
      throw corrupt("inner message set ends inside a message", { offset: wrapper.offset });
    const size = LOG_OVERHEAD + inner.readInt32BE(pos + 8);
    if (size < LOG_OVERHEAD || pos + size > inner.length)
      throw corrupt("inner message set ends inside a message", { offset: wrapper.offset });
    const message = readMessage(inner, pos, size);
    if (message.magic !== wrapper.magic) {
      throw corrupt(`inner message magic ${message.magic} differs from its wrapper's ${wrapper.magic}`, {
        offset: wrapper.offset,
      });
    }
    if ((message.attributes & CODEC_MASK) !== 0)
      throw corrupt("compressed message inside a compressed message", { offset: wrapper.offset });
    messages.push(message);
    pos += size;
  }
  return messages;
}
