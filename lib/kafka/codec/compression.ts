/**
 * The compression codecs of Kafka record batches, by name and by the id in a batch's attributes
 * (bits 0-2). Everything is asynchronous so gzip (and zstd on Node 22.15+) run off the event loop;
 * snappy, lz4 and the zstd wasm fallback are synchronous JavaScript/wasm.
 */
import { promisify } from "node:util";
import zlib from "node:zlib";
import { ReplicatorError } from "../../errors.js";
import { lz4Compress, lz4Decompress } from "./lz4.js";
import { snappyCompress, snappyDecompress } from "./snappy.js";
import { zstdCompress, zstdDecompress } from "./zstd.js";

export type CompressionCodec = "none" | "gzip" | "snappy" | "lz4" | "zstd";

/** Codec ids as they appear in the low three bits of a batch's attributes. */
export const CODEC_IDS: Readonly<Record<CompressionCodec, number>> = {
  none: 0,
  gzip: 1,
  snappy: 2,
  lz4: 3,
  zstd: 4,
};

const CODECS_BY_ID: readonly CompressionCodec[] = ["none", "gzip", "snappy", "lz4", "zstd"];

/** The codec with this attributes id, or undefined for ids Kafka does not define (5-7). */
export function codecFromId(id: number): CompressionCodec | undefined {
  return CODECS_BY_ID[id];
}

const gzip = promisify(zlib.gzip);
// unzip also accepts a zlib-wrapped stream, as kafkajs and the Java client's stream reader do.
const unzip = promisify(zlib.unzip);

export async function compress(codec: CompressionCodec, data: Buffer): Promise<Buffer> {
  switch (codec) {
    case "none":
      return data;
    case "gzip":
      return gzip(data);
    case "snappy":
      return snappyCompress(data);
    case "lz4":
      return lz4Compress(data);
    case "zstd":
      return zstdCompress(data);
  }
}

/** Throws ReplicatorError CORRUPT_BATCH when `data` is not valid for `codec`. */
export async function decompress(codec: CompressionCodec, data: Buffer): Promise<Buffer> {
  try {
    switch (codec) {
      case "none":
        return data;
      case "gzip":
        return await unzip(data);
      case "snappy":
        return snappyDecompress(data);
      case "lz4":
        return lz4Decompress(data);
      case "zstd":
        return await zstdDecompress(data);
    }
  } catch (error) {
    throw new ReplicatorError("CORRUPT_BATCH", `${codec} decompression failed`, {
      cause: error,
      details: { codec, compressedBytes: data.length },
    });
  }
}
