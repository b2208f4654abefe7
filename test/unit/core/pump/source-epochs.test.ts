/**
 * epochParts: a fetch cut where the source's leader epoch changes, so the pump writes one epoch
 * at a time and checkpoints where a new one begins.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { FetchedRecords, MirrorRecord } from "../../../../lib/core/model.js";
import { unitsOfRecords } from "../../../../lib/core/pump/copy-units.js";
import { epochParts } from "../../../../lib/core/pump/source-epochs.js";

const rec = (offset: number): MirrorRecord => ({ offset, timestamp: 0, key: null, value: null, headers: [] });

function fetched(offsets: number[], nextOffset: number, epochs?: FetchedRecords["epochs"]): FetchedRecords {
  return {
    records: offsets.map(rec),
    nextOffset,
    highWatermark: nextOffset,
    logStartOffset: 0,
    bytes: 0,
    ...(epochs === undefined ? {} : { epochs }),
  };
}

const shape = (parts: ReturnType<typeof epochParts>) =>
  parts.map((p) => ({
    epoch: p.epoch,
    from: p.from,
    offsets: (p.units as readonly MirrorRecord[]).map((r) => r.offset),
    next: p.nextOffset,
  }));

describe("epochParts", () => {
  it("one part when the reader cannot tell epochs (no change assumed)", () => {
    assert.deepEqual(shape(epochParts(unitsOfRecords(fetched([3, 4], 5)), 3)), [
      { epoch: undefined, from: 3, offsets: [3, 4], next: 5 },
    ]);
  });

  it("cuts at each epoch start; a part may hold no record (a control batch, a gap)", () => {
    const parts = epochParts(
      unitsOfRecords(
        fetched([10, 11, 14, 15], 16, [
          { offset: 10, epoch: 4 },
          { offset: 12, epoch: 5 },
          { offset: 13, epoch: 6 },
        ]),
      ),
      10,
    );

    assert.deepEqual(shape(parts), [
      { epoch: 4, from: 10, offsets: [10, 11], next: 12 },
      { epoch: 5, from: 12, offsets: [], next: 13 },
      { epoch: 6, from: 13, offsets: [14, 15], next: 16 },
    ]);
  });

  it("an epoch of -1 (magic 0/1 messages) is unknown: null", () => {
    assert.deepEqual(shape(epochParts(unitsOfRecords(fetched([0], 1, [{ offset: 0, epoch: -1 }])), 0)), [
      { epoch: null, from: 0, offsets: [0], next: 1 },
    ]);
  });
});
