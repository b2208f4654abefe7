/**
 * The record codec: Kafka's bytes of records, both ways, with no I/O. v2 record batches
 * (record-batch.ts, their header in batch-header.ts), source batches passed through as they came
 * (pass-through.ts, its CRC arithmetic in crc32c-shift.ts), legacy magic 0/1 message sets
 * (legacy-message-set.ts), the compression codecs (compression.ts: gzip, snappy.ts, lz4.ts over
 * lz4-block.ts, zstd.ts), the checksums (crc32c.ts: @node-rs/crc32's native CRC-32C, or
 * crc32c-js.ts where it does not load; crc32.ts) and varints (varint.ts); shared types in
 * model.ts. Imports lib/core's model and provenance and lib/errors.ts; nothing else in lib/kafka.
 */
export { CODECS, compress, decompress } from "./compression.js";
export type { ControlType, DecodedBatch } from "./model.js";
export { contentCrc, rewriteForProduce, scanRecordSet, sourceBatchOf } from "./pass-through.js";
export { decodeRecordBatches, encodeRecordBatch } from "./record-batch.js";
