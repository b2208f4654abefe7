/**
 * Snappy as Kafka clients write it. The Java client wraps snappy in xerial's stream framing
 * ("\x82SNAPPY\0", two int32 versions, then int32-length-prefixed raw snappy chunks); librdkafka
 * writes one raw snappy block. Every client reads both (xerial's SnappyInputStream falls back to
 * raw, librdkafka and kafkajs-snappy check the magic), so we read both and write the xerial
 * framing with the Java client's 32 KiB chunks: it is what the broker's own (Java) validator and
 * every consumer have seen most.
 */
import { createRequire } from "node:module";

interface SnappyJs {
  compress(data: Buffer): Buffer;
  uncompress(data: Buffer, maxLength?: number): Buffer;
}

const require = createRequire(import.meta.url);
let snappyjs: SnappyJs | undefined;
function lib(): SnappyJs {
  snappyjs ??= require("snappyjs") as SnappyJs;
  return snappyjs;
}

const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
const XERIAL_HEADER_SIZE = 16;
const XERIAL_VERSION = 1;
const XERIAL_COMPATIBLE_VERSION = 1;
/** xerial's SnappyOutputStream.DEFAULT_BLOCK_SIZE, which the Java producer uses. */
export const XERIAL_CHUNK_SIZE = 32 * 1024;

export function isXerialFramed(data: Buffer): boolean {
  return data.length >= XERIAL_HEADER_SIZE && data.compare(XERIAL_MAGIC, 0, 8, 0, 8) === 0;
}

export function snappyCompress(data: Buffer): Buffer {
  const snappy = lib();
  const chunks: Buffer[] = [];
  let size = XERIAL_HEADER_SIZE;
  for (let pos = 0; pos < data.length; pos += XERIAL_CHUNK_SIZE) {
    const chunk = snappy.compress(data.subarray(pos, Math.min(pos + XERIAL_CHUNK_SIZE, data.length)));
    chunks.push(chunk);
    size += 4 + chunk.length;
  }
  const out = Buffer.allocUnsafe(size);
  XERIAL_MAGIC.copy(out, 0);
  out.writeInt32BE(XERIAL_VERSION, 8);
  out.writeInt32BE(XERIAL_COMPATIBLE_VERSION, 12);
  let pos = XERIAL_HEADER_SIZE;
  for (const chunk of chunks) {
    out.writeInt32BE(chunk.length, pos);
    chunk.copy(out, pos + 4);
    pos += 4 + chunk.length;
  }
  return out;
}

/** Throws a plain Error on malformed input; the caller turns it into CORRUPT_BATCH. */
export function snappyDecompress(data: Buffer): Buffer {
  const snappy = lib();
  if (!isXerialFramed(data)) return snappy.uncompress(data);
  const parts: Buffer[] = [];
  let total = 0;
  let pos = XERIAL_HEADER_SIZE;
  while (pos < data.length) {
    if (pos + 4 > data.length) throw new Error("truncated xerial snappy chunk length");
    const length = data.readInt32BE(pos);
    pos += 4;
    if (length < 0 || pos + length > data.length) throw new Error("truncated xerial snappy chunk");
    const part = snappy.uncompress(data.subarray(pos, pos + length));
    parts.push(part);
    total += part.length;
    pos += length;
  }
  const [only] = parts;
  return parts.length === 1 && only !== undefined ? only : Buffer.concat(parts, total);
}
