/**
 * The bench's data: records of a fixed value size with printable bytes (so the kcat pipeline's
 * newline-delimited text stream carries them unchanged), written with sizeable batches by our
 * idempotent writer, and per-partition digests to prove a copy is exact.
 */
import { createHash, randomBytes } from "node:crypto";
import type { MirrorRecord, TopicPartition } from "../../lib/core/model.js";
import type { ClusterAdmin, SourceReader } from "../../lib/core/ports.js";
import { KafkaPartitionWriter } from "../../lib/kafka/produce/target-writer.js";

const ALPHABET = Buffer.from("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789");
const POOL_EXTRA = 64 * 1024;
/** Records per write() call: bounds the memory the generator holds at once. */
const CHUNK = 4_000;

/** Values are views into one random printable pool at varying offsets: distinct, and no copies. */
export class ValuePool {
  readonly #pool: Buffer;
  readonly #size: number;

  constructor(size: number) {
    this.#size = size;
    const random = randomBytes(size + POOL_EXTRA);
    for (let i = 0; i < random.length; i++)
      random[i] = ALPHABET[(random[i] as number) % ALPHABET.length] as number;
    this.#pool = random;
  }

  value(seed: number): Buffer {
    const start = (seed * 7919) % POOL_EXTRA;
    return this.#pool.subarray(start, start + this.#size);
  }
}

export function benchRecord(pool: ValuePool, partition: number, i: number, timestamp: number): MirrorRecord {
  return {
    offset: i,
    timestamp,
    key: Buffer.from(`k${partition}-${i}`),
    value: pool.value(partition * 1_000_003 + i),
    headers: [],
  };
}

export interface WriteDataOptions {
  readonly brokers: readonly string[];
  readonly topic: string;
  readonly partitions: number;
  readonly records: number;
  readonly recordBytes: number;
  readonly batchBytes: number;
}

/**
 * The bench's data set: `options.records` of `options.recordBytes` written to `topic` on the
 * source, logged as every bench run logs it; the produce rate in records per second.
 */
export async function writeDataSet(
  brokers: readonly string[],
  topic: string,
  partitions: number,
  options: { readonly records: number; readonly recordBytes: number; readonly sourceBatchBytes: number },
  log: (line: string) => void,
): Promise<number> {
  log(`writing ${options.records} records of ${options.recordBytes} B over ${partitions} partitions`);
  const writeStart = performance.now();
  await writeBenchData({
    brokers,
    topic,
    partitions,
    records: options.records,
    recordBytes: options.recordBytes,
    batchBytes: options.sourceBatchBytes,
  });
  return options.records / ((performance.now() - writeStart) / 1000);
}

/** Writes `records` spread evenly over the partitions, all partitions at once. */
export async function writeBenchData(opts: WriteDataOptions): Promise<void> {
  const pool = new ValuePool(opts.recordBytes);
  const writer = new KafkaPartitionWriter({
    brokers: [...opts.brokers],
    clientId: "bench-data",
    maxBatchBytes: opts.batchBytes,
    maxBatchRecords: 1_000_000,
  });
  try {
    await Promise.all(
      Array.from({ length: opts.partitions }, async (_, partition) => {
        const count = partitionShare(opts.records, opts.partitions, partition);
        for (let start = 0; start < count; start += CHUNK) {
          const now = Date.now();
          const chunk: MirrorRecord[] = [];
          for (let i = start; i < Math.min(count, start + CHUNK); i++) {
            chunk.push(benchRecord(pool, partition, i, now));
          }
          await writer.write({ topic: opts.topic, partition }, chunk);
        }
      }),
    );
  } finally {
    await writer.close();
  }
}

export function partitionShare(total: number, partitions: number, partition: number): number {
  return Math.floor(total / partitions) + (partition < total % partitions ? 1 : 0);
}

/**
 * kafka-mirror appends a provenance header to every copy (its source cluster, partition and
 * offset); as the last header of a record it is the one intended difference, so digests leave
 * it out. Spelled here, not imported, so the bench digests the bytes as they are on the wire.
 */
const PROVENANCE_HEADER = Buffer.from("kafka-mirror.provenance");

export interface PartitionDigest {
  readonly records: number;
  readonly bytes: number;
  readonly sha256: string;
}

/**
 * Streams one partition through our reader into a digest of everything a copy must keep
 * (timestamp, key, value, headers, in order; offsets excluded). Length prefixes keep field
 * boundaries unambiguous.
 */
export async function digestPartition(
  reader: SourceReader,
  admin: ClusterAdmin,
  tp: TopicPartition,
): Promise<PartitionDigest> {
  const [offsets] = await admin.listOffsets(tp.topic, [tp.partition]);
  if (offsets === undefined) throw new Error(`no offsets for ${tp.topic}/${tp.partition}`);
  const hash = createHash("sha256");
  const scratch = Buffer.allocUnsafe(8);
  const field = (b: Buffer | null): void => {
    scratch.writeInt32BE(b === null ? -1 : b.length, 0);
    hash.update(scratch.subarray(0, 4));
    if (b !== null) hash.update(b);
  };
  let records = 0;
  let bytes = 0;
  let offset = offsets.logStartOffset;
  while (offset < offsets.logEndOffset) {
    const fetched = await reader.fetch(tp, offset, { maxRecords: 100_000, maxBytes: 8 << 20, maxWaitMs: 0 });
    if (fetched.nextOffset <= offset)
      throw new Error(`no progress reading ${tp.topic}/${tp.partition} at ${offset}`);
    for (const record of fetched.records) {
      const last = record.headers.at(-1);
      const headers =
        last?.key.equals(PROVENANCE_HEADER) === true ? record.headers.slice(0, -1) : record.headers;
      scratch.writeDoubleBE(record.timestamp, 0);
      hash.update(scratch);
      field(record.key);
      field(record.value);
      scratch.writeInt32BE(headers.length, 0);
      hash.update(scratch.subarray(0, 4));
      for (const header of headers) {
        field(header.key);
        field(header.value);
        bytes += header.key.length + (header.value?.length ?? 0);
      }
      bytes += (record.key?.length ?? 0) + (record.value?.length ?? 0);
    }
    records += fetched.records.length;
    offset = fetched.nextOffset;
  }
  return { records, bytes, sha256: hash.digest("hex") };
}
