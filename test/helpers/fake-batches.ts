/**
 * Source batches (SourceBatch, target.copy "batches") as the in-memory cluster gives them. A
 * batch's `bytes` stand for its encoding: a token this module maps back to its records, so a
 * fake writer given one writes exactly those records, as Kafka stores a passed-through batch.
 * `contentCrc` is a digest of what a copy keeps (timestamps, keys, values, headers, their
 * order), not of offsets or the producer, as the real one leaves out the rewritten fields. A
 * whole batch leaves it null, as the real reader does for a batch passing as it came under a
 * target.compression, so every test of the look, translation and verify asks for it
 * (fakeContentCrc, SourceReader.contentCrc).
 */
import type { MirrorRecord, SourceBatch } from "../../lib/core/model.js";

const tokens = new WeakMap<Buffer, readonly MirrorRecord[]>();
let nextToken = 0;

/** What a batch of these records would be: passed as it came (`whole`), or decoded. */
export function sourceBatch(
  records: readonly MirrorRecord[],
  producerId: bigint,
  whole: boolean,
): SourceBatch {
  const first = records[0];
  const last = records.at(-1);
  if (first === undefined || last === undefined) throw new RangeError("a batch needs a record");
  const bytes = Buffer.from(`fake-batch-${++nextToken}${whole ? "" : "-encoded-again"}`);
  tokens.set(bytes, records);
  return {
    baseOffset: first.offset,
    lastOffset: last.offset,
    count: records.length,
    maxTimestamp: records.reduce((max, r) => Math.max(max, r.timestamp), Number.NEGATIVE_INFINITY),
    producerId,
    contentCrc: whole ? null : contentDigest(records),
    bytes,
  };
}

/** SourceReader.contentCrc of the fakes. */
export async function fakeContentCrc(batch: SourceBatch): Promise<number> {
  return batch.contentCrc ?? contentDigest(recordsOf(batch));
}

/** The records a batch's token stands for. */
export function recordsOf(batch: SourceBatch): readonly MirrorRecord[] {
  const records = tokens.get(batch.bytes);
  if (records === undefined) throw new Error("a batch the fake did not make was written to it");
  return records;
}

/** FNV-1a over what a copy keeps, as an unsigned 32-bit number. */
export function contentDigest(records: readonly MirrorRecord[]): number {
  let h = 0x811c9dc5;
  const mix = (byte: number) => {
    h = Math.imul(h ^ byte, 0x01000193);
  };
  const bytes = (b: Buffer | null) => {
    if (b === null) return mix(0xff);
    mix(b.length & 0xff);
    for (const x of b) mix(x);
  };
  for (const r of records) {
    for (const x of Buffer.from(String(r.timestamp))) mix(x);
    bytes(r.key);
    bytes(r.value);
    for (const header of r.headers) {
      bytes(header.key);
      bytes(header.value);
    }
    mix(0x1e);
  }
  return h >>> 0;
}
