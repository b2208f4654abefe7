/**
 * A digest of records as the mirror must preserve them: key, value, headers (order, repeats and
 * null values included) and timestamp, never the offset (it differs between the clusters). Every
 * field is length-prefixed, with -1 for null, so no two different records encode alike.
 */
import { createHash, type Hash } from "node:crypto";
import type { MirrorRecord } from "../core/model.js";

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
