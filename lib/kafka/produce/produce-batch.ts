/**
 * One produce batch of a write: records the session encodes (target.copy "records"), or a source
 * batch it passes on with its producer fields rewritten (target.copy "batches",
 * codec/pass-through.ts). Both take the same way through pipelining, sequences, resends and
 * transactions; they differ in how the session lays them out (producer-session.ts) and in that a
 * source batch the broker refuses cannot be split to find the record to blame (produce-outcome.ts).
 */
import type { MirrorRecord, SourceBatch } from "../../core/model.js";

export type ProduceBatch = readonly MirrorRecord[] | SourceBatch;

export function isSourceBatch(batch: ProduceBatch): batch is SourceBatch {
  return !Array.isArray(batch);
}

/** The data records a batch holds: what its sequence numbers and acknowledgements count. */
export function recordsIn(batch: ProduceBatch): number {
  return isSourceBatch(batch) ? batch.count : batch.length;
}

export function recordsInAll(batches: readonly ProduceBatch[]): number {
  return batches.reduce((n, batch) => n + recordsIn(batch), 0);
}

/** The source offsets of a batch's first and last records; -1 for an empty one. */
export function sourceOffsetsOf(batch: ProduceBatch): { readonly first: number; readonly last: number } {
  if (isSourceBatch(batch)) return { first: batch.baseOffset, last: batch.lastOffset };
  return { first: batch[0]?.offset ?? -1, last: batch.at(-1)?.offset ?? -1 };
}
