// Magic 0 and 1 messages laid out byte by byte from Kafka's LegacyRecord.java, for tests of our
// decoder (lib/kafka/codec/legacy-message-set.ts). Written apart from it: the CRC is node:zlib's crc32,
// gzip is node:zlib's, snappy is snappyjs's raw block (what librdkafka writes) unless asked for the
// xerial framing, so a test compares our decoder with an encoding it does not share.
import { createRequire } from "node:module";
import zlib from "node:zlib";

const require = createRequire(import.meta.url);

export interface LegacyMessageSpec {
  readonly magic: 0 | 1;
  /** The entry's offset field: absolute, or relative inside a v1 wrapper. */
  readonly offset: number;
  /** v1 only (ignored for v0). @default 0 */
  readonly timestamp?: number;
  /** Bit 3, v1 only. @default false */
  readonly logAppendTime?: boolean;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
}

export type LegacyCodec = "gzip" | "snappy" | "xerial-snappy" | "lz4" | "lz4-broken-hc";

const CODEC_IDS: Readonly<Record<LegacyCodec, number>> = {
  gzip: 1,
  snappy: 2,
  "xerial-snappy": 2,
  lz4: 3,
  "lz4-broken-hc": 3,
};

function bytesField(bytes: Buffer | null): Buffer {
  const length = Buffer.alloc(4);
  length.writeInt32BE(bytes === null ? -1 : bytes.length, 0);
  return bytes === null ? length : Buffer.concat([length, bytes]);
}

function entry(spec: LegacyMessageSpec, attributes: number): Buffer {
  const head = Buffer.alloc(spec.magic === 1 ? 10 : 2);
  head.writeInt8(spec.magic, 0);
  head.writeInt8(attributes | (spec.magic === 1 && spec.logAppendTime === true ? 0x08 : 0), 1);
  if (spec.magic === 1) head.writeBigInt64BE(BigInt(spec.timestamp ?? 0), 2);
  const body = Buffer.concat([head, bytesField(spec.key), bytesField(spec.value)]);
  const frame = Buffer.alloc(16);
  frame.writeBigInt64BE(BigInt(spec.offset), 0);
  frame.writeInt32BE(4 + body.length, 8);
  frame.writeUInt32BE(zlib.crc32(body), 12);
  return Buffer.concat([frame, body]);
}

/** One uncompressed message as a log entry (offset, size, crc, ...). */
export function legacyMessage(spec: LegacyMessageSpec): Buffer {
  return entry(spec, 0);
}

/** A compressed wrapper around `inner` (messages, or entries already laid out); its key is null. */
export function legacyWrapper(
  wrapper: Omit<LegacyMessageSpec, "key" | "value">,
  codec: LegacyCodec,
  inner: readonly (LegacyMessageSpec | Buffer)[],
): Buffer {
  const set = Buffer.concat(inner.map((m) => (Buffer.isBuffer(m) ? m : legacyMessage(m))));
  return entry({ ...wrapper, key: null, value: compressed(codec, set) }, CODEC_IDS[codec]);
}

function compressed(codec: LegacyCodec, set: Buffer): Buffer {
  switch (codec) {
    case "gzip":
      return zlib.gzipSync(set);
    case "snappy":
      return Buffer.from((require("snappyjs") as { compress(b: Buffer): Buffer }).compress(set));
    case "xerial-snappy":
      return xerial(set);
    case "lz4":
      return lz4Frame(set);
    case "lz4-broken-hc": {
      // Kafka's v0 LZ4 framing (KIP-57): the header checksum byte is wrong for the LZ4 spec.
      const frame = lz4Frame(set);
      frame[6] = ((frame[6] as number) ^ 0x5a) & 0xff;
      return frame;
    }
  }
}

function xerial(set: Buffer): Buffer {
  const block = (require("snappyjs") as { compress(b: Buffer): Buffer }).compress(set);
  const header = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0, 0, 0, 0, 1, 0, 0, 0, 1]);
  const length = Buffer.alloc(4);
  length.writeInt32BE(block.length, 0);
  return Buffer.concat([header, length, Buffer.from(block)]);
}

/** lz4js's frame: FLG 0x40 (version 01, no content size), BD 0x70, so byte 6 is the header checksum. */
function lz4Frame(set: Buffer): Buffer {
  const frame = (require("lz4js") as { compress(b: Uint8Array): Uint8Array }).compress(set);
  return Buffer.from(frame);
}
