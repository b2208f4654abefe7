/** What a read_committed reader sees of decoded record batches (record-batch.ts). */
import type { DecodedBatch } from "../codec/model.js";

/**
 * read_committed for a fetched partition, as the Java consumer does it: walking batches in
 * offset order, each aborted transaction (producerId, firstOffset) from the Fetch response
 * becomes active once a batch reaches its firstOffset; that producer's transactional data batches
 * are aborted until its ABORT marker. Aborted batches stay in the result with `records: []`, so
 * offset accounting (lastOffset, nextOffset) still sees them; control batches are kept as they are.
 */
export function dropAborted(
  batches: DecodedBatch[],
  aborted: readonly { producerId: bigint; firstOffset: number }[],
): DecodedBatch[] {
  if (aborted.length === 0) return batches;
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
      return batch;
    }
    if (batch.isTransactional && abortedProducers.has(batch.producerId)) return { ...batch, records: [] };
    return batch;
  });
}
