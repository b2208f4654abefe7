/**
 * The compression codecs of Kafka record batches: one row per codec (name, the id in a batch's
 * attributes bits 0-2, compress, decompress), keyed by lib/config/compression.ts's list. Everything is asynchronous so gzip (and zstd on Node 22.15+) run off the event loop;
 * snappy, lz4 and the zstd wasm fallback are synchronous JavaScript/wasm.
 */
import { promisify } from "node:util";
import zlib from "node:zlib";
import type { CompressionCodec } from "../../config/compression.js";
import { ReplicatorError } from "../../errors.js";
import { lz4Compress, lz4Decompress } from "./lz4.js";
import { snappyCompress, snappyDecompress } from "./snappy.js";
import { zstdCompress, zstdDecompress } from "./zstd.js";

const gzip = promisify(zlib.gzip);
// unzip also accepts a zlib-wrapped stream, as kafkajs and the Java client's stream reader do.
const unzip = promisify(zlib.unzip);

export interface Codec {
  /** The id in the low three bits of a batch's attributes. */
  readonly id: number;
  compress(data: Buffer): Promise<Buffer>;
  decompress(data: Buffer): Promise<Buffer>;
}

/** The one codec table: the encoder, the decoders and the ids all read it. */
export const CODECS: Readonly<Record<CompressionCodec, Codec>> = {
  none: { id: 0, compress: async (data) => data, decompress: async (data) => data },
  gzip: { id: 1, compress: (data) => gzip(data), decompress: (data) => unzip(data) },
  snappy: {
    id: 2,
    compress: async (data) => snappyCompress(data),
    decompress: async (data) => snappyDecompress(data),
  },
  lz4: {
    id: 3,
    compress: async (data) => lz4Compress(data),
    decompress: async (data) => lz4Decompress(data),
  },
  zstd: {
    id: 4,
    compress: async (data) => zstdCompress(data),
    decompress: async (data) => zstdDecompress(data),
  },
};

const CODECS_BY_ID: ReadonlyMap<number, CompressionCodec> = new Map(
  (Object.keys(CODECS) as CompressionCodec[]).map((name) => [CODECS[name].id, name]),
);

/** The codec with this attributes id, or undefined for ids Kafka does not define (5-7). */
export function codecFromId(id: number): CompressionCodec | undefined {
  return CODECS_BY_ID.get(id);
}

export async function compress(codec: CompressionCodec, data: Buffer): Promise<Buffer> {
  return CODECS[codec].compress(data);
}

/** Throws ReplicatorError CORRUPT_BATCH when `data` is not valid for `codec`. */
export async function decompress(codec: CompressionCodec, data: Buffer): Promise<Buffer> {
  try {
    return await CODECS[codec].decompress(data);
  } catch (error) {
    throw new ReplicatorError("CORRUPT_BATCH", `${codec} decompression failed`, {
      cause: error,
      details: { codec, compressedBytes: data.length },
    });
  }
}
