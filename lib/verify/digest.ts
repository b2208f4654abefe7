/**
 * A digest of records as the mirror must preserve them: key, value, headers (order, repeats and
 * null values included) and timestamp, never the offset (it differs between the clusters). Every
 * field is length-prefixed, with -1 for null, so no two different records encode alike. In
 * target.copy "batches", a digest of batches: what a copy keeps of each (BatchDigest).
 */
import { createHash, type Hash } from "node:crypto";
import type { MirrorRecord, SourceBatch } from "../core/model.js";

export class RecordDigest {
  readonly #hash: Hash = createHash("sha256");
  #records = 0;

  add(record: MirrorRecord): void {
    updateWithRecord(this.#hash, record);
    this.#records++;
  }

  get records(): number {
    return this.#records;
  }

  /** Hex sha256; the digest can no longer be added to afterwards. */
  hex(): string {
    return this.#hash.digest("hex");
  }
}

/** True when the two records carry the same key, value, headers and timestamp. */
export function sameContent(a: MirrorRecord, b: MirrorRecord): boolean {
  return (
    a.timestamp === b.timestamp &&
    sameBytes(a.key, b.key) &&
    sameBytes(a.value, b.value) &&
    a.headers.length === b.headers.length &&
    a.headers.every((h, i) => {
      const other = b.headers[i];
      return other !== undefined && sameBytes(h.key, other.key) && sameBytes(h.value, other.value);
    })
  );
}

function sameBytes(a: Buffer | null, b: Buffer | null): boolean {
  if (a === null || b === null) return a === b;
  return a.equals(b);
}

function updateWithRecord(hash: Hash, record: MirrorRecord): void {
  const head = Buffer.alloc(12);
  head.writeBigInt64BE(BigInt(record.timestamp), 0);
  head.writeInt32BE(record.headers.length, 8);
  hash.update(head);
  updateWithBytes(hash, record.key);
  updateWithBytes(hash, record.value);
  for (const header of record.headers) {
    updateWithBytes(hash, header.key);
    updateWithBytes(hash, header.value);
  }
}

function updateWithBytes(hash: Hash, bytes: Buffer | null): void {
  const length = Buffer.alloc(4);
  length.writeInt32BE(bytes === null ? -1 : bytes.length, 0);
  hash.update(length);
  if (bytes !== null) hash.update(bytes);
}

/** A batch's contentCrc, which verify reads through withContentCrcs: never null here. */
function resolved(batch: SourceBatch): number {
  if (batch.contentCrc === null) throw new RangeError("a batch without its contentCrc (withContentCrcs)");
  return batch.contentCrc;
}

/**
 * A digest of batches as target.copy "batches" must preserve them: the record count, content CRC
 * and largest timestamp of each, in order; never the offsets or producer fields, which a copy
 * does not keep.
 */
export class BatchDigest {
  readonly #hash: Hash = createHash("sha256");
  #records = 0;

  add(batch: SourceBatch): void {
    const fields = Buffer.alloc(16);
    fields.writeInt32BE(batch.count, 0);
    fields.writeUInt32BE(resolved(batch) >>> 0, 4);
    fields.writeBigInt64BE(BigInt(Number.isSafeInteger(batch.maxTimestamp) ? batch.maxTimestamp : -1), 8);
    this.#hash.update(fields);
    this.#records += batch.count;
  }

  /** Records of the batches added. */
  get records(): number {
    return this.#records;
  }

  /** Hex sha256; the digest can no longer be added to afterwards. */
  hex(): string {
    return this.#hash.digest("hex");
  }
}

/**
 * What differs between a source batch and the batch held against it ("" when it is a copy): the
 * record count, the content CRC (over everything but what a copy rewrites, so equal CRCs mean
 * equal bytes but for those), the largest timestamp.
 */
export function batchDifference(a: SourceBatch, b: SourceBatch): string {
  const differs: string[] = [];
  if (a.count !== b.count) differs.push(`${a.count} records against ${b.count}`);
  if (resolved(a) !== resolved(b)) differs.push("content CRC");
  if (a.maxTimestamp !== b.maxTimestamp)
    differs.push(`max timestamp ${a.maxTimestamp} against ${b.maxTimestamp}`);
  return differs.join(", ");
}

/** True when `b` holds what a copy of `a` keeps (batchDifference is empty). */
export function sameBatch(a: SourceBatch, b: SourceBatch): boolean {
  return batchDifference(a, b) === "";
}
