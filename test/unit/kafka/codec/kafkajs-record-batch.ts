/**
 * kafkajs 2.2.4's own record batch encoder and decoder, an implementation independent of ours to
 * cross-check against. They are internals without types, so the shapes used are declared here.
 */
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

export type KafkajsHeaders = Record<string, Buffer | null | (Buffer | null)[]>;

interface Encoder {
  readonly buffer: Buffer;
}

interface KafkajsRecordInput {
  offsetDelta: number;
  timestampDelta: number;
  key: Buffer | null;
  value: Buffer | null;
  headers?: KafkajsHeaders;
}

export interface KafkajsBatchInput {
  compression: number;
  firstOffset: string;
  firstTimestamp: number;
  maxTimestamp: number;
  lastOffsetDelta: number;
  transactional?: boolean;
  producerId?: string;
  producerEpoch?: number;
  firstSequence?: number;
  records: KafkajsRecordInput[];
}

export interface KafkajsDecodedRecord {
  offset: string;
  timestamp: string;
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, Buffer | Buffer[]>;
}

export interface KafkajsDecodedBatch {
  firstOffset: string;
  producerId: string;
  producerEpoch: number;
  firstSequence: number;
  inTransaction: boolean;
  records: KafkajsDecodedRecord[];
}

const { RecordBatch } = require("kafkajs/src/protocol/recordBatch/v0/index.js") as {
  RecordBatch(input: Omit<KafkajsBatchInput, "records"> & { records: Encoder[] }): Promise<Encoder>;
};
const Record = require("kafkajs/src/protocol/recordBatch/record/v0/index.js") as (
  r: KafkajsRecordInput,
) => Encoder;
const decodeBatch = require("kafkajs/src/protocol/recordBatch/v0/decoder.js") as (
  decoder: unknown,
) => Promise<KafkajsDecodedBatch>;
const Decoder = require("kafkajs/src/protocol/decoder.js") as new (buffer: Buffer) => unknown;
const crc32C = require("kafkajs/src/protocol/recordBatch/crc32C/index.js") as (buffer: Buffer) => number;

/** kafkajs's Compression.Types ids. */
export const KAFKAJS_NONE = 0;
export const KAFKAJS_GZIP = 1;

export async function kafkajsEncode(input: KafkajsBatchInput): Promise<Buffer> {
  const encoder = await RecordBatch({ ...input, records: input.records.map((r) => Record(r)) });
  return encoder.buffer;
}

export function kafkajsDecode(batch: Buffer): Promise<KafkajsDecodedBatch> {
  return decodeBatch(new Decoder(batch));
}

export function kafkajsCrc32c(bytes: Buffer): number {
  return crc32C(bytes);
}
