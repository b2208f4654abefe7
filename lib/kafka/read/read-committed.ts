/** What a read_committed reader sees of fetched record batches (decoded, or scanned by header). */
import type { ControlType, DecodedBatch } from "../codec/model.js";

/** What read_committed needs of a batch: a DecodedBatch or pass-through's ScannedBatch. */
export interface TransactionView {
  readonly lastOffset: number;
  readonly producerId: bigint;
  readonly isTransactional: boolean;
  readonly isControl: boolean;
  readonly controlType: ControlType | null;
}

/**
 * read_committed for a fetched partition, as the Java consumer does it: walking batches in
 * offset order, each aborted transaction (producerId, firstOffset) from the Fetch response
 * becomes active once a batch reaches its firstOffset; that producer's transactional data batches
 * are aborted until its ABORT marker. Per batch: whether it is such an aborted data batch. Only
 * headers are read (producer id, offsets, bits), so pass-through needs no records for it.
 */
export function abortedBatches(
  batches: readonly TransactionView[],
  aborted: readonly { producerId: bigint; firstOffset: number }[],
): boolean[] {
  if (aborted.length === 0) return batches.map(() => false);
  const pending = [...aborted].sort((a, b) => a.firstOffset - b.firstOffset);
  let next = 0;
  const abortedProducers = new Set<bigint>();
  return batches.map((batch) => {
    for (
      let txn = pending[next];
      txn !== undefined && txn.firstOffset <= batch.lastOffset;
      txn = pending[++next]
    ) {
      abortedProducers.add(txn.producerId);
    }
    if (batch.isControl) {
      if (batch.controlType === "abort") abortedProducers.delete(batch.producerId);
      return false;
    }
    return batch.isTransactional && abortedProducers.has(batch.producerId);
  });
}

/**
 * read_committed on decoded batches: aborted batches stay in the result with `records: []`, so
 * offset accounting (lastOffset, nextOffset) still sees them; control batches are kept as they are.
 */
export function dropAborted(
  batches: DecodedBatch[],
  aborted: readonly { producerId: bigint; firstOffset: number }[],
): DecodedBatch[] {
  if (aborted.length === 0) return batches;
  const flags = abortedBatches(batches, aborted);
  return batches.map((batch, i) => (flags[i] === true ? { ...batch, records: [] } : batch));
}
