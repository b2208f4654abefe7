import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { EpochStart, MirrorRecord } from "../../../../lib/core/model.js";
import { canMerge, type FetchedUnits, mergeFetched } from "../../../../lib/core/pump/copy-units.js";
import { epochParts } from "../../../../lib/core/pump/source-epochs.js";

function record(offset: number): MirrorRecord {
  return {
    offset,
    timestamp: 1_700_000_000_000 + offset,
    key: null,
    value: Buffer.from([offset]),
    headers: [],
  };
}

/** A fetch of the records at `offsets`, ending before `next`. */
function fetched(offsets: number[], next: number, epochs?: EpochStart[]): FetchedUnits {
  return {
    units: offsets.map(record),
    nextOffset: next,
    highWatermark: 100,
    logStartOffset: 0,
    bytes: offsets.length * 10,
    ...(epochs === undefined ? {} : { epochs }),
  };
}

describe("mergeFetched", () => {
  it("joins a fetch and the one after it, in one leader epoch", () => {
    const a = fetched([0, 1, 2], 3, [{ offset: 0, epoch: 4 }]);
    const b = fetched([3, 5], 6, [{ offset: 3, epoch: 4 }]);
    const merged = mergeFetched(a, b);
    assert.deepEqual(
      merged.units.map((u) => (u as MirrorRecord).offset),
      [0, 1, 2, 3, 5],
    );
    assert.equal(merged.nextOffset, 6);
    assert.equal(merged.bytes, 50);
    assert.deepEqual(merged.epochs, [{ offset: 0, epoch: 4 }]);
  });

  it("keeps where a new epoch begins, so the pump still writes each epoch's part on its own", () => {
    const a = fetched([0, 1], 2, [{ offset: 0, epoch: 4 }]);
    const b = fetched([2, 3, 4], 5, [
      { offset: 2, epoch: 5 },
      { offset: 4, epoch: 6 },
    ]);
    const merged = mergeFetched(a, b);
    assert.deepEqual(merged.epochs, [
      { offset: 0, epoch: 4 },
      { offset: 2, epoch: 5 },
      { offset: 4, epoch: 6 },
    ]);
    assert.deepEqual(
      epochParts(merged, 0).map((p) => [p.epoch, p.from, p.units.length, p.nextOffset]),
      [
        [4, 0, 2, 2],
        [5, 2, 2, 4],
        [6, 4, 1, 5],
      ],
    );
  });

  it("refuses fetches that do not follow each other, or do not say their epochs", () => {
    const a = fetched([0, 1], 2, [{ offset: 0, epoch: 4 }]);
    assert.equal(canMerge(a, fetched([3], 4, [{ offset: 3, epoch: 4 }])), false, "a gap between them");
    assert.equal(canMerge(a, fetched([2], 3)), false, "no epochs after");
    assert.equal(canMerge(fetched([0, 1], 2), fetched([2], 3, [{ offset: 2, epoch: 4 }])), false);
    assert.throws(() => mergeFetched(a, fetched([3], 4, [{ offset: 3, epoch: 4 }])), /does not continue/);
  });
});
