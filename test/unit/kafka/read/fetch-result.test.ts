import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { MirrorRecord } from "../../../../lib/core/model.js";
import {
  type BatchView,
  epochsOf,
  recordBytes,
  slicePartition,
} from "../../../../lib/kafka/read/fetch-result.js";

function rec(offset: number): MirrorRecord {
  return { offset, timestamp: 0, key: Buffer.from([offset]), value: Buffer.from("vv"), headers: [] };
}

function batch(
  baseOffset: number,
  lastOffset: number,
  offsets: number[],
  isControl = false,
  leaderEpoch = 0,
): BatchView {
  return { baseOffset, lastOffset, leaderEpoch, isControl, records: offsets.map(rec) };
}

const offsets = (records: readonly MirrorRecord[]) => records.map((r) => r.offset);

describe("slicePartition", () => {
  it("drops records below the requested offset and continues after the last batch", () => {
    const batches = [batch(0, 4, [0, 1, 2, 3, 4]), batch(5, 6, [5, 6])];

    const slice = slicePartition(batches, batches, 3, 100);

    assert.deepEqual(offsets(slice.records), [3, 4, 5, 6]);
    assert.equal(slice.nextOffset, 7);
    assert.equal(slice.bytes, 4 * 3);
  });

  it("steps over control batches and compaction gaps", () => {
    const batches = [batch(10, 14, [10, 13]), batch(15, 15, [], true), batch(16, 20, [20])];

    const slice = slicePartition(batches, batches, 10, 100);

    assert.deepEqual(offsets(slice.records), [10, 13, 20]);
    assert.equal(slice.nextOffset, 21);
  });

  it("cuts at maxRecords and resumes at the first record not returned", () => {
    const batches = [batch(0, 4, [0, 1, 2, 3, 4]), batch(5, 9, [5, 6, 7, 8, 9])];

    const slice = slicePartition(batches, batches, 1, 4);

    assert.deepEqual(offsets(slice.records), [1, 2, 3, 4]);
    assert.equal(slice.nextOffset, 5);
  });

  it("cutting past a compaction gap resumes at the next existing record", () => {
    const batches = [batch(0, 9, [0, 1, 7, 9])];

    const slice = slicePartition(batches, batches, 0, 2);

    assert.equal(slice.nextOffset, 7);
  });

  it("skips aborted records but still moves past their batch", () => {
    const all = [batch(0, 2, [0, 1, 2]), batch(3, 5, [3, 4, 5])];
    const visible = [batch(0, 2, [0, 1, 2]), batch(3, 5, [])];

    const slice = slicePartition(all, visible, 0, 100);

    assert.deepEqual(offsets(slice.records), [0, 1, 2]);
    assert.equal(slice.nextOffset, 6);
  });

  it("returns the requested offset when nothing came back", () => {
    const slice = slicePartition([], [], 42, 100);

    assert.deepEqual(slice, { records: [], nextOffset: 42, bytes: 0, epochs: [] });
  });

  it("never moves backwards when a returned batch ends before the requested offset", () => {
    const batches = [batch(0, 4, [0, 1, 2, 3, 4])];

    assert.equal(slicePartition(batches, batches, 8, 100).nextOffset, 8);
  });
});

describe("recordBytes", () => {
  it("sums key, value and header bytes, nulls counting zero", () => {
    const record: MirrorRecord = {
      offset: 0,
      timestamp: 0,
      key: null,
      value: Buffer.alloc(10),
      headers: [
        { key: Buffer.from("ab"), value: null },
        { key: Buffer.from("c"), value: Buffer.alloc(3) },
      ],
    };

    assert.equal(recordBytes(record), 16);
  });
});

describe("epochsOf", () => {
  it("starts at the requested offset, inside the first batch", () => {
    const batches = [batch(0, 9, [0, 5, 9], false, 3)];

    assert.deepEqual(epochsOf(batches, 4, 10), [{ offset: 4, epoch: 3 }]);
  });

  it("gives a compacted gap between two epochs to the newer one, where Kafka's epoch cache has it begin", () => {
    // Epoch 0 ends at 99; epoch 1 began at 100, but compaction removed its batches up to 149.
    const batches = [batch(90, 99, [90, 99], false, 0), batch(150, 159, [150], false, 1)];

    assert.deepEqual(epochsOf(batches, 95, 160), [
      { offset: 95, epoch: 0 },
      { offset: 100, epoch: 1 },
    ]);
    // A fetch from the gap: the new epoch begins where it was asked to.
    assert.deepEqual(epochsOf(batches.slice(1), 100, 160), [{ offset: 100, epoch: 1 }]);
  });

  it("counts control batches, one entry per change, and stops before `to`", () => {
    const batches = [
      batch(0, 4, [0, 1, 2, 3, 4], false, 1),
      batch(5, 5, [], true, 2),
      batch(6, 9, [6, 7, 8, 9], false, 2),
      batch(10, 12, [10, 11, 12], false, 3),
    ];

    assert.deepEqual(epochsOf(batches, 0, 10), [
      { offset: 0, epoch: 1 },
      { offset: 5, epoch: 2 },
    ]);
  });
});
