/**
 * LZ4 for magic-v2 batches and v0/v1 wrapper messages: the standard LZ4 frame format. Old Kafka
 * clients wrote v0 frames with a wrong header checksum (KIP-57); as no checksum is verified here,
 * both framings read alike. We parse frames ourselves and let lz4js
 * decode the blocks: lz4js 0.2.0's own frame reader looks for a block checksum before the block
 * instead of after it. Checksums are skipped, not verified: the batch CRC already covers the bytes.
 * The output of a frame is one contiguous buffer, so linked blocks (back references into the
 * previous block) resolve as well as independent ones.
 *
 * We write frames as Kafka's Java producer does (KafkaLZ4BlockOutputStream): 64 KiB blocks, each
 * compressed on its own (lz4-block.ts), the block-independence flag set, no checksums. Kafka's
 * broker decompresses every batch it validates and refuses any other frame ("Dependent block
 * stream is unsupported", UNKNOWN_SERVER_ERROR to the producer); lz4js's frame writer leaves that
 * flag clear and its block writer breaks the format's end rules. The test bed's mock never
 * decompressed what it stored; real Kafka (test/integration/replication.test.ts) does.
 */
import { createRequire } from "node:module";
import { lz4BlockBound, lz4CompressBlock } from "./lz4-block.js";

interface Lz4Js {
  /** Decodes one block of `src[sIndex, sIndex + sLength)` into `dst` at `dIndex`; returns the new end. */
  decompressBlock(src: Uint8Array, dst: Uint8Array, sIndex: number, sLength: number, dIndex: number): number;
}

type Xxh32 = (seed: number, src: Uint8Array, index: number, length: number) => number;

const require = createRequire(import.meta.url);
let lz4js: Lz4Js | undefined;
function lib(): Lz4Js {
  // Loaded on first use: lz4js allocates 5 MiB of scratch space at import.
  lz4js ??= require("lz4js") as Lz4Js;
  return lz4js;
}
let xxh32: Xxh32 | undefined;
function headerHash(): Xxh32 {
  xxh32 ??= (require("lz4js/xxh32.js") as { hash: Xxh32 }).hash;
  return xxh32;
}

const FRAME_MAGIC = 0x184d2204;
const SKIPPABLE_MASK = 0xfffffff0;
const SKIPPABLE_MAGIC = 0x184d2a50;
const VERSION_01 = 0x40;
const FLAG_BLOCK_INDEPENDENCE = 0x20;
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

/** Block size code 4 in the frame descriptor: 64 KiB, the Java producer's. */
const WRITE_BLOCK_CODE = 4;
const WRITE_BLOCK_SIZE = 0x10000;
const HASH_TABLE_SIZE = 1 << 16;

/** One frame of independent 64 KiB blocks, each stored uncompressed when that is smaller. */
export function lz4Compress(data: Buffer): Buffer {
  const blocks = Math.ceil(data.length / WRITE_BLOCK_SIZE);
  // Header, one length word per block, the blocks at most as long as their input, end mark.
  const out = Buffer.allocUnsafe(7 + 4 * blocks + data.length + 4);
  out.writeUInt32LE(FRAME_MAGIC, 0);
  out[4] = VERSION_01 | FLAG_BLOCK_INDEPENDENCE;
  out[5] = WRITE_BLOCK_CODE << 4;
  // The descriptor checksum: byte 1 of xxh32 (seed 0) over the flag and block descriptor bytes.
  out[6] = (headerHash()(0, out, 4, 2) >>> 8) & 0xff;
  let pos = 7;
  const scratch = Buffer.allocUnsafe(lz4BlockBound(WRITE_BLOCK_SIZE));
  const hashTable = new Int32Array(HASH_TABLE_SIZE);
  for (let start = 0; start < data.length; start += WRITE_BLOCK_SIZE) {
    const length = Math.min(WRITE_BLOCK_SIZE, data.length - start);
    const packed = lz4CompressBlock(data, start, start + length, scratch, hashTable);
    if (packed < length) {
      out.writeUInt32LE(packed, pos);
      scratch.copy(out, pos + 4, 0, packed);
      pos += 4 + packed;
    } else {
      out.writeUInt32LE((UNCOMPRESSED_BIT | length) >>> 0, pos);
      data.copy(out, pos + 4, start, start + length);
      pos += 4 + length;
    }
  }
  out.writeUInt32LE(0, pos);
  return out.subarray(0, pos + 4);
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
