import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { readAheadDepth } from "../../../../lib/core/pump/source-feed.js";

const MIB = 1024 * 1024;

describe("readAheadDepth", () => {
  it("reads ahead as many full fetches as a write holds, two to eight", () => {
    assert.equal(readAheadDepth({ maxBytes: MIB }, 4 * MIB), 4, "the defaults");
    assert.equal(readAheadDepth({ maxBytes: MIB }, 3.5 * MIB), 4, "a part of a fetch counts");
    assert.equal(readAheadDepth({ maxBytes: MIB }, 0), 2, "one fetch per write still reads two ahead");
    assert.equal(readAheadDepth({ maxBytes: 4 * MIB }, 4 * MIB), 2);
    assert.equal(readAheadDepth({ maxBytes: 1024 }, 4 * MIB), 8, "small fetches: no more than eight");
  });
});
