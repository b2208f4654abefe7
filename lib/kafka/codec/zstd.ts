/**
 * Zstandard for Kafka batches. Node 22.15+ has zstd in node:zlib (asynchronous, streaming); on
 * older Node we use @bokuweb/zstd-wasm, whose one-shot decompress needs the output size up front:
 * it takes the frame's content size when the header has one, and otherwise a caller-given buffer
 * size (1 MiB by default, too small for many batches). Java (zstd-jni's ZstdOutputStream) and
 * librdkafka write streaming frames without a content size, so we walk the frame's block headers
 * to get an exact upper bound instead (what ZSTD_decompressBound does; the wasm build does not
 * export it).
 */
import { promisify } from "node:util";
import zlib from "node:zlib";

type ZlibZstd = (data: Buffer) => Promise<Buffer>;
type NodeZstd = { zstdCompress?: typeof zlib.gzip; zstdDecompress?: typeof zlib.gunzip };

const nodeZstd = zlib as unknown as NodeZstd;
const nativeCompress: ZlibZstd | undefined = nodeZstd.zstdCompress && promisify(nodeZstd.zstdCompress);
const nativeDecompress: ZlibZstd | undefined = nodeZstd.zstdDecompress && promisify(nodeZstd.zstdDecompress);

type ZstdWasm = typeof import("@bokuweb/zstd-wasm");
let wasm: Promise<ZstdWasm> | undefined;

function loadWasm(): Promise<ZstdWasm> {
  wasm ??= (async () => {
    const module = await import("@bokuweb/zstd-wasm");
    await module.init();
    return module;
  })().catch((error: unknown) => {
    wasm = undefined; // let a later call retry instead of failing forever
    throw error;
  });
  return wasm;
}

/** Which implementation this process uses, for logs and tests. */
export const zstdImplementation: "node:zlib" | "wasm" = nativeDecompress ? "node:zlib" : "wasm";

const WASM_LEVEL = 3; // zstd's default, as Java and librdkafka use

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export async function zstdCompress(data: Buffer): Promise<Buffer> {
  if (nativeCompress) return nativeCompress(data);
  return asBuffer((await loadWasm()).compress(data, WASM_LEVEL));
}

/** Throws a plain Error on malformed input; the caller turns it into CORRUPT_BATCH. */
export async function zstdDecompress(data: Buffer): Promise<Buffer> {
  if (nativeDecompress) return nativeDecompress(data);
  return zstdDecompressWasm(data);
}

/** The wasm path, exported so tests on any Node version exercise it. */
export async function zstdDecompressWasm(data: Buffer): Promise<Buffer> {
  const frames = scanZstdFrames(data);
  const zstd = await loadWasm();
  const parts = frames.map((frame) =>
    // The wasm decompress uses the header's content size when there is one and ignores this.
    asBuffer(
      zstd.decompress(data.subarray(frame.start, frame.end), { defaultHeapSize: Math.max(frame.bound, 1) }),
    ),
  );
  const [only] = parts;
  if (parts.length === 1 && only !== undefined) return only;
  return Buffer.concat(parts);
}

export interface ZstdFrame {
  readonly start: number;
  readonly end: number;
  /** Upper bound of the frame's decompressed size. */
  readonly bound: number;
}

const FRAME_MAGIC = 0xfd2fb528;
const SKIPPABLE_MASK = 0xfffffff0;
const SKIPPABLE_MAGIC = 0x184d2a50;
const MAX_BLOCK_SIZE = 128 * 1024;
const DICT_ID_SIZES = [0, 1, 2, 4] as const;
const FCS_SIZES = [0, 2, 4, 8] as const;
const BLOCK_RAW = 0;
const BLOCK_RLE = 1;
const BLOCK_COMPRESSED = 2;

/**
 * Splits `data` into zstd frames (skippable frames dropped) with a decompressed-size bound each,
 * following RFC 8878: a raw or RLE block regenerates exactly its Block_Size, a compressed block
 * at most min(Window_Size, 128 KiB).
 */
export function scanZstdFrames(data: Buffer): ZstdFrame[] {
  const frames: ZstdFrame[] = [];
  let pos = 0;
  while (pos < data.length) {
    const start = pos;
    if (pos + 4 > data.length) throw new Error("truncated zstd frame magic");
    const magic = data.readUInt32LE(pos);
    if ((magic & SKIPPABLE_MASK) >>> 0 === SKIPPABLE_MAGIC) {
      if (pos + 8 > data.length) throw new Error("truncated zstd skippable frame");
      pos += 8 + data.readUInt32LE(pos + 4);
      if (pos > data.length) throw new Error("truncated zstd skippable frame");
      continue;
    }
    if (magic !== FRAME_MAGIC) throw new Error("not a zstd frame");
    pos += 4;
    const descriptor = data[pos++];
    if (descriptor === undefined) throw new Error("truncated zstd frame header");
    if ((descriptor & 0x08) !== 0) throw new Error("zstd frame header reserved bit set");
    const fcsFlag = descriptor >> 6;
    const singleSegment = (descriptor & 0x20) !== 0;
    const hasChecksum = (descriptor & 0x04) !== 0;
    let windowSize = 0;
    if (!singleSegment) {
      const windowDescriptor = data[pos++];
      if (windowDescriptor === undefined) throw new Error("truncated zstd frame header");
      const base = 2 ** (10 + (windowDescriptor >> 3));
      windowSize = base + (base / 8) * (windowDescriptor & 7);
    }
    pos += DICT_ID_SIZES[descriptor & 3] ?? 0;
    const fcsSize = fcsFlag === 0 ? (singleSegment ? 1 : 0) : (FCS_SIZES[fcsFlag] ?? 0);
    if (pos + fcsSize > data.length) throw new Error("truncated zstd frame header");
    let contentSize = -1;
    if (fcsSize === 1) contentSize = data.readUInt8(pos);
    else if (fcsSize === 2) contentSize = data.readUInt16LE(pos) + 256;
    else if (fcsSize === 4) contentSize = data.readUInt32LE(pos);
    else if (fcsSize === 8) contentSize = data.readUInt32LE(pos + 4) * 2 ** 32 + data.readUInt32LE(pos);
    pos += fcsSize;
    if (singleSegment) windowSize = contentSize;
    const blocks = scanBlocks(data, pos, Math.min(windowSize, MAX_BLOCK_SIZE));
    pos = blocks.end;
    if (hasChecksum) pos += 4;
    if (pos > data.length) throw new Error("truncated zstd frame");
    frames.push({ start, end: pos, bound: contentSize >= 0 ? contentSize : blocks.bound });
  }
  if (frames.length === 0) throw new Error("no zstd frame");
  return frames;
}

/** A frame's blocks from `pos`: where they end, and a bound of what they regenerate. */
function scanBlocks(data: Buffer, pos: number, maxBlock: number): { end: number; bound: number } {
  let bound = 0;
  let last = false;
  while (!last) {
    if (pos + 3 > data.length) throw new Error("truncated zstd block header");
    const header = data.readUIntLE(pos, 3);
    pos += 3;
    last = (header & 1) === 1;
    const type = (header >> 1) & 3;
    const size = header >>> 3;
    if (type === BLOCK_RAW) {
      bound += size;
      pos += size;
    } else if (type === BLOCK_RLE) {
      bound += size;
      pos += 1;
    } else if (type === BLOCK_COMPRESSED) {
      bound += maxBlock;
      pos += size;
    } else {
      throw new Error("reserved zstd block type");
    }
  }
  return { end: pos, bound };
}
