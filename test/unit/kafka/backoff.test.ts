import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { backoffDelay } from "../../../lib/kafka/backoff.js";

describe("backoffDelay", () => {
  it("doubles from the initial delay, jittered between half and all of it", () => {
    assert.equal(
      backoffDelay(0, { initialMs: 100 }, () => 0),
      50,
    );
    assert.equal(
      backoffDelay(0, { initialMs: 100 }, () => 1),
      100,
    );
    assert.equal(
      backoffDelay(3, { initialMs: 100 }, () => 1),
      800,
    );
  });

  it("never exceeds the maximum", () => {
    assert.equal(
      backoffDelay(40, { initialMs: 100, maxMs: 2000 }, () => 1),
      2000,
    );
  });
});
