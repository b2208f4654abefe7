/**
 * target.copy "batches": a source batch copied to the target as it came. The reader scans a
 * Fetch response's record set by the batch headers alone (scanRecordSet: CRC checked, records not
 * decoded), and makes each data batch it keeps a SourceBatch (sourceBatchOf); the writer lays it
 * out for a Produce request with its own producer fields (rewriteForProduce). Keys, values,
 * headers, timestamps, offset deltas and the compressed payload stay the source's bytes.
 *
 * A batch the target would refuse or change, or that must not be copied whole, is decoded and
 * encoded again from the records kept, in its own codec, with CreateTime and each record's
 * effective timestamp, offset deltas 0..n-1 and no producer: one that begins before the offset
 * asked for, one with compaction gaps (Kafka refuses a produced batch whose offset range is not its
 * record count: "Inconsistent batch offset range", LogValidator), one with LogAppendTime
 * timestamps (a CreateTime target would rewrite its max timestamp), a magic 0/1 message set.
 *
 * Rewriting the producer fields changes only the first 36 bytes of the CRC'd region, so the new
 * CRC comes from the stored one (crc32c-shift.ts): O(1) per batch, not O(bytes). A stored CRC
 * that does not match the bytes gives a new one that does not either, so the target's broker,
 * which checks every produced batch's CRC before it stores anything (CORRUPT_MESSAGE), refuses
 * a batch corrupted at the source or on the way. The worker's reader leaves that check to it
 * (CrcCheck "write"); whatever else acts on a batch checks its CRC itself.
 *
 * With target.compression set, every batch goes in that codec: one that came in another has its
 * records section decompressed and compressed again, nothing else of it changed. Its contentCrc is
 * then that of its uncompressed form, which a copy shares with its source whichever compressor
 * made it (zstd is native on Node 22.15+ and wasm on Node 20; zlib differs between versions).
 */
import type { CompressionCodec } from "../../config/compression.js";
import type { MirrorRecord, SourceBatch } from "../../core/model.js";
import { isReplicatorError } from "../../errors.js";
import {
  ATTRIBUTES_OFFSET,
  BASE_SEQUENCE_OFFSET,
  BATCH_LENGTH_OFFSET,
  CODEC_MASK,
  CONTROL_FLAG,
  CRC_OFFSET,
  checkBatchCrc,
  checkedBaseOffset,
  corrupt,
  HEADER_SIZE,
  headerBaseOffset,
  LAST_OFFSET_DELTA_OFFSET,
  LOG_APPEND_TIME_FLAG,
  LOG_OVERHEAD,
  MAGIC_OFFSET,
  MAX_TIMESTAMP_OFFSET,
  NO_PARTITION_LEADER_EPOCH,
  PARTITION_LEADER_EPOCH_OFFSET,
  PRODUCER_EPOCH_OFFSET,
  PRODUCER_ID_OFFSET,
  RECORD_COUNT_OFFSET,
  readSafeInt64,
  recordSetEntries,
  TRANSACTIONAL_FLAG,
} from "./batch-header.js";
import { CODECS, codecFromId, compress, decompress } from "./compression.js";
import { crc32c } from "./crc32c.js";
import { crc32cAfterChange } from "./crc32c-shift.js";
import { decodeLegacyEntry } from "./legacy-message-set.js";
import type { ControlType, DecodedBatch } from "./model.js";
import { decodeBatch, encodeRecordBatch } from "./record-batch.js";

/** The attributes byte of a legacy (magic 0/1) message; its low three bits name the codec. */
const LEGACY_ATTRIBUTES_OFFSET = 17;

/**
 * Where a v2 data batch's stored CRC-32C is checked against its bytes. "scan": as it is read.
 * "write": a batch that passes as it came is checked by the target's broker when it is written
 * (see above), not read once more here; one that is decoded, recompressed or dropped on its
 * header's word is checked first (sourceBatchOf, checkScannedCrc), and its contentCrc is left
 * to be computed on demand (contentCrcOnDemand), which checks it. The worker's reads only:
 * reading every byte for the CRC was 14% of its CPU in `npm run bench -- --copy batches`.
 */
export type CrcCheck = "scan" | "write";

/** One entry of a fetched record set, read as far as pass-through needs. */
export interface ScannedBatch {
  /** The header's baseOffset (a legacy entry: its first message's offset), as DecodedBatch's. */
  readonly baseOffset: number;
  /** baseOffset + lastOffsetDelta: the batch covers offsets up to here, compaction gaps included. */
  readonly lastOffset: number;
  /** -1 for magic 0/1. */
  readonly leaderEpoch: number;
  /** -1n for magic 0/1. */
  readonly producerId: bigint;
  readonly isTransactional: boolean;
  readonly isControl: boolean;
  /** Control batches only: what it marks, which read_committed needs. */
  readonly controlType: ControlType | null;
  readonly codec: CompressionCodec;
  /** The entry as fetched, from its baseOffset field to its end. */
  readonly bytes: Buffer;
  /** A v2 data batch without compaction gaps or LogAppendTime: it can pass as it came. */
  readonly whole: boolean;
  /** Its records when the scan had to decode it (legacy messages, control batches); else null. */
  readonly records: readonly MirrorRecord[] | null;
  /** Its CRC matched its bytes in the scan; false when the scan left it (CrcCheck "write"). */
  readonly crcChecked: boolean;
}

/**
 * Every complete entry of a Fetch response's record set, in order. v2 data batches are read by
 * their headers only, their CRC checked unless `crc` is "write"; control batches and legacy
 * messages are decoded. Throws ReplicatorError CORRUPT_BATCH as decodeRecordBatches does, but
 * finds a malformed record only in what it decodes (the target's broker checks the records of
 * what passes).
 */
export async function scanRecordSet(data: Buffer, crc: CrcCheck = "scan"): Promise<ScannedBatch[]> {
  const batches: ScannedBatch[] = [];
  for (const entry of recordSetEntries(data)) {
    const magic = entry.length > MAGIC_OFFSET ? entry[MAGIC_OFFSET] : undefined;
    if (magic === 0 || magic === 1) {
      const legacy = await decodeLegacyEntry(entry, 0, entry.length);
      batches.push(scannedDecoded(legacy, entry, entry[LEGACY_ATTRIBUTES_OFFSET] as number));
    } else {
      batches.push(await scanBatch(entry, crc));
    }
  }
  return batches;
}

async function scanBatch(entry: Buffer, crc: CrcCheck): Promise<ScannedBatch> {
  const crcChecked = crc === "scan";
  const baseOffset = (crcChecked ? checkedBaseOffset : headerBaseOffset)(entry, 0, entry.length);
  const attributes = entry.readInt16BE(ATTRIBUTES_OFFSET);
  if ((attributes & CONTROL_FLAG) !== 0) {
    return scannedDecoded(await decodeBatch(entry, 0, entry.length), entry, attributes);
  }
  const codec = codecOf(attributes, baseOffset);
  const lastOffsetDelta = entry.readInt32BE(LAST_OFFSET_DELTA_OFFSET);
  const lastOffset = baseOffset + lastOffsetDelta;
  if (!Number.isSafeInteger(lastOffset)) throw corrupt("lastOffset beyond Number.MAX_SAFE_INTEGER");
  const recordCount = entry.readInt32BE(RECORD_COUNT_OFFSET);
  if (recordCount < 0) throw corrupt("negative record count", { baseOffset, recordCount });
  return {
    baseOffset,
    lastOffset,
    leaderEpoch: entry.readInt32BE(PARTITION_LEADER_EPOCH_OFFSET),
    producerId: entry.readBigInt64BE(PRODUCER_ID_OFFSET),
    isTransactional: (attributes & TRANSACTIONAL_FLAG) !== 0,
    isControl: false,
    controlType: null,
    codec,
    bytes: entry,
    whole:
      recordCount > 0 && recordCount === lastOffsetDelta + 1 && (attributes & LOG_APPEND_TIME_FLAG) === 0,
    records: null,
    crcChecked,
  };
}

/** Throws CORRUPT_BATCH unless `batch`'s CRC matches its bytes; a scan that checked it is believed. */
export function checkScannedCrc(batch: ScannedBatch): void {
  if (!batch.crcChecked) checkBatchCrc(batch.bytes, 0, batch.bytes.length, batch.baseOffset);
}

function codecOf(attributes: number, baseOffset: number): CompressionCodec {
  const codecId = attributes & CODEC_MASK;
  const codec = codecFromId(codecId);
  if (codec === undefined) throw corrupt(`unknown compression codec id ${codecId}`, { baseOffset, codecId });
  return codec;
}

function scannedDecoded(batch: DecodedBatch, bytes: Buffer, attributes: number): ScannedBatch {
  return {
    baseOffset: batch.baseOffset,
    lastOffset: batch.lastOffset,
    leaderEpoch: batch.leaderEpoch,
    producerId: batch.producerId,
    isTransactional: batch.isTransactional,
    isControl: batch.isControl,
    controlType: batch.controlType,
    codec: codecOf(attributes, batch.baseOffset),
    bytes,
    whole: false,
    records: batch.records,
    crcChecked: true, // decoding checked it
  };
}

/**
 * The data batch `batch` as a SourceBatch of its records at or after `offset`: as it came when it
 * is whole and begins there or later, else those records encoded again; null when it keeps none.
 * `codec` (target.compression) puts it in that codec, its contentCrc over its records uncompressed;
 * undefined keeps the batch's own. A batch passing as it came whose CRC the scan left has its
 * contentCrc left null (contentCrcOnDemand checks it); any other is checked here, as decoding
 * does, before anything is made of its bytes.
 */
export async function sourceBatchOf(
  batch: ScannedBatch,
  offset: number,
  codec?: CompressionCodec,
): Promise<SourceBatch | null> {
  if (batch.isControl) throw new RangeError("a control batch is not copied");
  if (batch.whole && batch.baseOffset >= offset) {
    const asItCame = codec === undefined || batch.codec === codec;
    // Recompressed, it gets a CRC of its own, which would cover a corrupted source batch.
    if (!asItCame) checkScannedCrc(batch);
    const sent = await asSent(batch.bytes, codec);
    return {
      baseOffset: batch.baseOffset,
      lastOffset: batch.lastOffset,
      count: batch.lastOffset - batch.baseOffset + 1,
      maxTimestamp: readSafeInt64(sent.bytes, MAX_TIMESTAMP_OFFSET, "maxTimestamp"),
      producerId: batch.producerId,
      contentCrc: asItCame && !batch.crcChecked ? null : sent.contentCrc,
      bytes: sent.bytes,
    };
  }
  const records = batch.records ?? (await decodeBatch(batch.bytes, 0, batch.bytes.length)).records;
  const kept = records.filter((record) => record.offset >= offset);
  const first = kept[0];
  const last = kept.at(-1);
  if (first === undefined || last === undefined) return null;
  const encoded = await encodeRecordBatch(kept, {
    // Compressed once, by asSent, when the target's codec is set.
    compression: codec === undefined ? batch.codec : "none",
    producerId: -1n,
    producerEpoch: -1,
    baseSequence: -1,
  });
  const sent = await asSent(encoded, codec);
  return {
    baseOffset: first.offset,
    lastOffset: last.offset,
    count: kept.length,
    maxTimestamp: readSafeInt64(sent.bytes, MAX_TIMESTAMP_OFFSET, "maxTimestamp"),
    producerId: batch.producerId,
    contentCrc: sent.contentCrc,
    bytes: sent.bytes,
  };
}

/**
 * The v2 batch `bytes` as it is to be sent in `codec` (undefined: its own), with its contentCrc:
 * null for a batch already in `codec`, whose CRC uncompressed (uncompressedContentCrc) would cost
 * a decompression that only a look, a translation or verify needs.
 */
async function asSent(
  bytes: Buffer,
  codec: CompressionCodec | undefined,
): Promise<{ readonly bytes: Buffer; readonly contentCrc: number | null }> {
  if (codec === undefined) return { bytes, contentCrc: contentCrc(bytes) };
  const from = batchCodec(bytes);
  if (from === codec) return { bytes, contentCrc: null };
  const plain = await recompressed(bytes, from, "none");
  return { bytes: await recompressed(plain, "none", codec), contentCrc: contentCrc(plain) };
}

/** The codec of the v2 batch `bytes`, whose header the scan read (CRC checked) or our encoder wrote. */
function batchCodec(bytes: Buffer): CompressionCodec {
  return codecOf(bytes.readInt16BE(ATTRIBUTES_OFFSET), readSafeInt64(bytes, 0, "baseOffset"));
}

/**
 * SourceBatch.contentCrc of a batch that a reader left null (SourceReader.contentCrc): the
 * batch's CRC checked first (CORRUPT_BATCH), as the reader may have left it (CrcCheck "write");
 * then with a target.compression `codec` over its records uncompressed, else as it lies.
 */
export async function contentCrcOnDemand(
  bytes: Buffer,
  codec: CompressionCodec | undefined,
): Promise<number> {
  checkBatchCrc(bytes, 0, bytes.length, headerBaseOffset(bytes, 0, bytes.length));
  return codec === undefined ? contentCrc(bytes) : uncompressedContentCrc(bytes);
}

/**
 * SourceBatch.contentCrc under a target.compression: the contentCrc of the v2 batch `bytes` with
 * its records section uncompressed, whichever codec it is in. A section that does not decompress
 * (asSent passed it as it came, being in the codec) gives the contentCrc of the bytes as they
 * lie, as with no codec set: its copy holds the same bytes, so the two still match, and a look
 * or verify does not stop on what was copied.
 */
export async function uncompressedContentCrc(bytes: Buffer): Promise<number> {
  try {
    return contentCrc(await recompressed(bytes, batchCodec(bytes), "none"));
  } catch (error) {
    if (isReplicatorError(error, "CORRUPT_BATCH")) return contentCrc(bytes);
    throw error;
  }
}

/**
 * The v2 batch `bytes`, its records section in `from`, with that section in `to`: `bytes` when the
 * two are one, else a new batch whose codec bits, length and CRC match; every other header field
 * as it came.
 */
async function recompressed(bytes: Buffer, from: CompressionCodec, to: CompressionCodec): Promise<Buffer> {
  if (from === to) return bytes;
  const records = await compress(to, await decompress(from, bytes.subarray(HEADER_SIZE)));
  const batch = Buffer.allocUnsafe(HEADER_SIZE + records.length);
  bytes.copy(batch, 0, 0, HEADER_SIZE);
  records.copy(batch, HEADER_SIZE);
  batch.writeInt32BE(batch.length - LOG_OVERHEAD, BATCH_LENGTH_OFFSET);
  const attributes = bytes.readInt16BE(ATTRIBUTES_OFFSET);
  batch.writeInt16BE((attributes & ~CODEC_MASK) | CODECS[to].id, ATTRIBUTES_OFFSET);
  batch.writeUInt32BE(crc32c(batch, ATTRIBUTES_OFFSET, batch.length), CRC_OFFSET);
  return batch;
}

/** The fields a producer sets in a batch it sends. */
export interface ProducerFields {
  readonly producerId: bigint;
  readonly producerEpoch: number;
  readonly baseSequence: number;
  /** Sets the transactional bit (attributes bit 4), or clears it. */
  readonly transactional: boolean;
}

const NO_PRODUCER: ProducerFields = {
  producerId: -1n,
  producerEpoch: -1,
  baseSequence: -1,
  transactional: false,
};

/** The last byte the producer fields touch: they all lie in [ATTRIBUTES_OFFSET, PRODUCER_FIELDS_END). */
const PRODUCER_FIELDS_END = RECORD_COUNT_OFFSET;

/** Writes `fields` into the header of the batch at the start of `batch`. */
function writeProducerFields(batch: Buffer, fields: ProducerFields): void {
  const attributes = batch.readInt16BE(ATTRIBUTES_OFFSET);
  const transactional = fields.transactional
    ? attributes | TRANSACTIONAL_FLAG
    : attributes & ~TRANSACTIONAL_FLAG;
  batch.writeInt16BE(transactional, ATTRIBUTES_OFFSET);
  batch.writeBigInt64BE(fields.producerId, PRODUCER_ID_OFFSET);
  batch.writeInt16BE(fields.producerEpoch, PRODUCER_EPOCH_OFFSET);
  batch.writeInt32BE(fields.baseSequence, BASE_SEQUENCE_OFFSET);
}

/** The CRC of `changed`, a copy of `original` whose producer fields were rewritten. */
function crcAfterRewrite(original: Buffer, changed: Buffer): number {
  return crc32cAfterChange(
    original.readUInt32BE(CRC_OFFSET),
    original.subarray(ATTRIBUTES_OFFSET, PRODUCER_FIELDS_END),
    changed.subarray(ATTRIBUTES_OFFSET, PRODUCER_FIELDS_END),
    original.length - ATTRIBUTES_OFFSET,
  );
}

/**
 * SourceBatch.contentCrc of the v2 batch `bytes`: its CRC-32C with producer id, producer epoch and
 * base sequence -1 and the transactional bit clear. The same for a source batch and its copy
 * fetched from the target, whose baseOffset and partitionLeaderEpoch (outside the CRC) differ.
 */
export function contentCrc(bytes: Buffer): number {
  const header = Buffer.from(bytes.subarray(0, PRODUCER_FIELDS_END));
  writeProducerFields(header, NO_PRODUCER);
  return crcAfterRewrite(bytes, header);
}

/**
 * The v2 batch `bytes` as a producer sends it: `fields` written, baseOffset 0 and
 * partitionLeaderEpoch -1, the CRC updated; everything else as it came. In two parts, written one
 * after the other: a new buffer of `headroom` free bytes (for the request around it) and the
 * rewritten header, then the records, which stay `bytes`' own memory: no copy of each fetched
 * megabyte into fresh memory per produce.
 */
export function rewriteForProduce(bytes: Buffer, fields: ProducerFields, headroom = 0): [Buffer, Buffer] {
  if (bytes.length < HEADER_SIZE) throw new RangeError("a batch shorter than its header");
  const head = Buffer.allocUnsafe(headroom + HEADER_SIZE);
  bytes.copy(head, headroom, 0, HEADER_SIZE);
  const batch = head.subarray(headroom);
  batch.writeBigInt64BE(0n, 0);
  batch.writeInt32BE(NO_PARTITION_LEADER_EPOCH, PARTITION_LEADER_EPOCH_OFFSET);
  writeProducerFields(batch, fields);
  batch.writeUInt32BE(crcAfterRewrite(bytes, batch), CRC_OFFSET);
  return [head, bytes.subarray(HEADER_SIZE)];
}
