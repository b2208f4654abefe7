import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  leaseMap,
  nearestPoint,
  OFFSET_MAP_MAX_POINTS,
  withPoint,
} from "../../../lib/core/lease/offset-map.js";
import type { OffsetMapPoint } from "../../../lib/core/ports.js";
import { encodeOffsetMap, parseOffsetMap } from "../../../lib/dynamodb/offset-map-attribute.js";

describe("withPoint", () => {
  it("keeps at most 32 points over a long history, the origin and the newest among them, older ones sparser", () => {
    let map: OffsetMapPoint[] = withPoint([], { source: 0, target: 0, origin: true });
    for (let c = 1; c <= 100_000; c++) map = withPoint(map, { source: c * 10, target: c * 11 });
    assert.equal(map.length, OFFSET_MAP_MAX_POINTS);
    assert.deepEqual(map[0], { source: 0, target: 0, origin: true });
    assert.deepEqual(map[map.length - 1], { source: 1_000_000, target: 1_100_000 });
    const gaps = map.slice(1).map((p, i) => p.source - (map[i]?.source ?? 0));
    // A group lagging by L records scans a stretch in proportion to L: each gap is at most the
    // distance of its start from the newest point.
    for (let i = 1; i < map.length - 1; i++) {
      const from = map[i]?.source ?? 0;
      assert.ok((gaps[i] ?? 0) <= 1_000_000 - from, `gap ${i} of ${gaps[i]} at ${from}`);
    }
    assert.ok((gaps[gaps.length - 1] ?? 0) < (gaps[1] ?? 0), "newer gaps are smaller than older ones");
  });

  it("replaces a point at the same source offset with the larger target, and ignores an older one", () => {
    const map = withPoint(withPoint([], { source: 5, target: 7 }), { source: 5, target: 9 });
    assert.deepEqual(map, [{ source: 5, target: 9 }]);
    assert.deepEqual(withPoint(map, { source: 4, target: 20 }), map);
  });

  it("nearestPoint falls back to the origin only", () => {
    const map = [
      { source: 10, target: 3, origin: true as const },
      { source: 20, target: 9 },
    ];
    assert.equal(nearestPoint(map, 25)?.index, 1);
    assert.equal(nearestPoint(map, 20)?.index, 1);
    assert.equal(nearestPoint(map, 19)?.index, 0);
    assert.equal(nearestPoint(map, 2)?.index, 0);
    assert.equal(nearestPoint([{ source: 10, target: 3 }], 2), null);
  });

  it("leaseMap adds the lease's current pair", () => {
    assert.deepEqual(leaseMap({ checkpoint: 30, targetOffset: 40, offsetMap: [{ source: 10, target: 3 }] }), [
      { source: 10, target: 3 },
      { source: 30, target: 40 },
    ]);
    assert.deepEqual(leaseMap({ checkpoint: 30, targetOffset: null }), []);
  });
});

describe("offset map attribute", () => {
  const invalid = (problem: string) => new Error(problem);
  it("round-trips, origin included", () => {
    const map = [
      { source: 0, target: 0, origin: true as const },
      { source: 5000, target: 5013 },
    ];
    assert.equal(encodeOffsetMap(map), "^0:0 5000:5013");
    assert.deepEqual(parseOffsetMap("^0:0 5000:5013", invalid), map);
    assert.deepEqual(parseOffsetMap(null, invalid), []);
  });

  for (const bad of ["1:2 1:3", "5:1 3:2", "1:2  3:4", "a:1", "1:2 ^3:4", "-1:2", "99999999999999999:1"]) {
    it(`refuses ${JSON.stringify(bad)}`, () => {
      assert.throws(() => parseOffsetMap(bad, invalid), /"source:target" pairs/);
    });
  }
});
