/**
 * The compression codecs a config may name (`target.compression`). The codecs themselves are one
 * table in lib/kafka/codec/compression.ts (name, id, compress, decompress), keyed by this list: a
 * name added here does not compile until the table has its row, and the config enum is this list.
 * The list lives here, not in lib/kafka, because the config may not import an adapter.
 */
export const COMPRESSION_CODECS = ["none", "gzip", "snappy", "lz4", "zstd"] as const;

export type CompressionCodec = (typeof COMPRESSION_CODECS)[number];
