import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { MirrorRecord } from "../../../../lib/core/model.js";
import { stamped, stampFor } from "../../../../lib/core/provenance.js";
import {
  BATCH_OVERHEAD_BYTES,
  estimateRecordSize,
  splitIntoBatches,
} from "../../../../lib/kafka/produce/batch-split.js";

function rec(offset: number, valueBytes: number): MirrorRecord {
  return { offset, timestamp: 0, key: null, value: Buffer.alloc(valueBytes), headers: [] };
}

const sizes = (batches: MirrorRecord[][]) => batches.map((b) => b.map((r) => r.offset));

describe("splitIntoBatches", () => {
  it("bounds batches by record count, keeping order", () => {
    const records = Array.from({ length: 7 }, (_, i) => rec(i, 1));

    assert.deepEqual(sizes(splitIntoBatches(records, 1 << 20, 3)), [[0, 1, 2], [3, 4, 5], [6]]);
  });

  it("bounds batches by estimated bytes", () => {
    const one = estimateRecordSize(rec(0, 100));
    const records = Array.from({ length: 5 }, (_, i) => rec(i, 100));

    const batches = splitIntoBatches(records, BATCH_OVERHEAD_BYTES + 2 * one, 100);

    assert.deepEqual(sizes(batches), [[0, 1], [2, 3], [4]]);
  });

  it("gives an oversized record a batch of its own", () => {
    const records = [rec(0, 10), rec(1, 5000), rec(2, 10)];

    assert.deepEqual(sizes(splitIntoBatches(records, 1000, 100)), [[0], [1], [2]]);
  });

  it("counts the provenance header a stamped write adds to every record", () => {
    const stamp = stampFor(
      { header: Buffer.from("kafka-mirror.provenance"), sourceAlias: "dc1", targetAlias: null },
      0,
    );
    const stampedRecord = stamped(rec(0, 100), stamp);
    const records = Array.from({ length: 4 }, (_, i) => rec(i, 100));
    // Room for two records as they are, but not for two stamped ones.
    const maxBytes = BATCH_OVERHEAD_BYTES + 2 * estimateRecordSize(rec(0, 100)) + 1;

    assert.equal(estimateRecordSize(rec(0, 100), stamp), estimateRecordSize(stampedRecord));
    assert.deepEqual(sizes(splitIntoBatches(records, maxBytes, 100)), [
      [0, 1],
      [2, 3],
    ]);
    assert.deepEqual(sizes(splitIntoBatches(records, maxBytes, 100, stamp)), [[0], [1], [2], [3]]);
  });

  it("returns no batch for no records", () => {
    assert.deepEqual(splitIntoBatches([], 1000, 10), []);
  });

  it("estimates at least the payload bytes of headers, key and value", () => {
    const record: MirrorRecord = {
      offset: 0,
      timestamp: 0,
      key: Buffer.alloc(7),
      value: Buffer.alloc(11),
      headers: [{ key: Buffer.alloc(3), value: Buffer.alloc(5) }],
    };

    assert.ok(estimateRecordSize(record) >= 7 + 11 + 3 + 5);
    assert.ok(estimateRecordSize(record) > estimateRecordSize({ ...record, headers: [] }));
  });
});
