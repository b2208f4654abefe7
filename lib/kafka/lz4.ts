/**
 * LZ4 for magic-v2 batches and v0/v1 wrapper messages: the standard LZ4 frame format. Old Kafka
 * clients wrote v0 frames with a wrong header checksum (KIP-57); as no checksum is verified here,
 * both framings read alike. We parse frames ourselves and let lz4js
 * decode the blocks: lz4js 0.2.0's own frame reader looks for a block checksum before the block
 * instead of after it. Checksums are skipped, not verified: the batch CRC already covers the bytes.
 * The output of a frame is one contiguous buffer, so linked blocks (back references into the
 * previous block) resolve as well as independent ones. We write what lz4js writes: independent
 * 4 MiB blocks without checksums, which the Java client and librdkafka both read.
 */
import { createRequire } from "node:module";

interface Lz4Js {
  compress(data: Uint8Array): Uint8Array;
  /** Decodes one block of `src[sIndex, sIndex + sLength)` into `dst` at `dIndex`; returns the new end. */
  decompressBlock(src: Uint8Array, dst: Uint8Array, sIndex: number, sLength: number, dIndex: number): number;
}

const require = createRequire(import.meta.url);
let lz4js: Lz4Js | undefined;
function lib(): Lz4Js {
  // Loaded on first use: lz4js allocates 5 MiB of scratch space at import.
  lz4js ??= require("lz4js") as Lz4Js;
  return lz4js;
}

const FRAME_MAGIC = 0x184d2204;
const SKIPPABLE_MASK = 0xfffffff0;
const SKIPPABLE_MAGIC = 0x184d2a50;
const VERSION_01 = 0x40;
const FLAG_BLOCK_CHECKSUM = 0x10;
const FLAG_CONTENT_SIZE = 0x08;
const FLAG_CONTENT_CHECKSUM = 0x04;
const FLAG_DICTIONARY_ID = 0x01;
const UNCOMPRESSED_BIT = 0x80000000;
const BLOCK_MAX_SIZES: Readonly<Record<number, number>> = {
  4: 0x10000,
  5: 0x40000,
  6: 0x100000,
  7: 0x400000,
};

export function lz4Compress(data: Buffer): Buffer {
  const frame = lib().compress(data);
  return Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength);
}

/** Throws a plain Error on malformed input; the caller turns it into CORRUPT_BATCH. */
export function lz4Decompress(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  let pos = 0;
  while (pos < data.length) {
    if (pos + 8 > data.length) throw new Error("truncated LZ4 frame");
    const magic = data.readUInt32LE(pos);
    if ((magic & SKIPPABLE_MASK) >>> 0 === SKIPPABLE_MAGIC) {
      pos += 8 + data.readUInt32LE(pos + 4);
      continue;
    }
    if (magic !== FRAME_MAGIC) throw new Error("not an LZ4 frame");
    const { output, end } = decodeFrame(data, pos);
    parts.push(output);
    pos = end;
  }
  const [only] = parts;
  if (parts.length === 1 && only !== undefined) return only;
  if (parts.length === 0) throw new Error("no LZ4 frame");
  return Buffer.concat(parts);
}

function decodeFrame(data: Buffer, start: number): { output: Buffer; end: number } {
  const flags = data.readUInt8(start + 4);
  const blockDescriptor = data.readUInt8(start + 5);
  if ((flags & 0xc0) !== VERSION_01) throw new Error("unsupported LZ4 frame version");
  const maxBlockSize = BLOCK_MAX_SIZES[(blockDescriptor >> 4) & 7];
  if (maxBlockSize === undefined) throw new Error("invalid LZ4 block size");
  const blockChecksumSize = flags & FLAG_BLOCK_CHECKSUM ? 4 : 0;
  let pos = start + 6;
  let contentSize = -1;
  if (flags & FLAG_CONTENT_SIZE) {
    contentSize = data.readUInt32LE(pos + 4) * 2 ** 32 + data.readUInt32LE(pos);
    pos += 8;
  }
  if (flags & FLAG_DICTIONARY_ID) pos += 4;
  pos += 1; // header checksum
  const blocksStart = pos;

  // First pass: where the frame ends and how much it can decode to, so the output is one buffer.
  let bound = 0;
  for (;;) {
    if (pos + 4 > data.length) throw new Error("truncated LZ4 frame");
    const header = data.readUInt32LE(pos);
    pos += 4;
    if (header === 0) break;
    const size = (header & ~UNCOMPRESSED_BIT) >>> 0;
    bound += header & UNCOMPRESSED_BIT ? size : maxBlockSize;
    pos += size + blockChecksumSize;
  }
  const end = pos + (flags & FLAG_CONTENT_CHECKSUM ? 4 : 0);
  if (end > data.length) throw new Error("truncated LZ4 frame");
  if (contentSize > bound) throw new Error("LZ4 content size larger than its blocks can hold");

  const output = Buffer.allocUnsafe(contentSize >= 0 ? contentSize : bound);
  const lz4 = lib();
  let written = 0;
  pos = blocksStart;
  for (;;) {
    const header = data.readUInt32LE(pos);
    pos += 4;
    if (header === 0) break;
    const size = (header & ~UNCOMPRESSED_BIT) >>> 0;
    if (header & UNCOMPRESSED_BIT) {
      if (written + size > output.length) throw new Error("LZ4 block larger than the frame's content size");
      data.copy(output, written, pos, pos + size);
      written += size;
    } else {
      const next = lz4.decompressBlock(data, output, pos, size, written);
      if (next - written > maxBlockSize || next > output.length)
        throw new Error("LZ4 block decodes too large");
      written = next;
    }
    pos += size + blockChecksumSize;
  }
  if (contentSize >= 0 && written !== contentSize) throw new Error("LZ4 frame shorter than its content size");
  return { output: output.subarray(0, written), end };
}
