/**
 * The backoff a worker gives a partition it failed (lib/core/run/failure-backoff.ts): one lease
 * duration, doubling with each failure in a row, capped; reset by a term that ended well.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BACKOFF_CAP_MS, FailureBackoff } from "../../../../lib/core/run/failure-backoff.js";

const NOW = 1_000_000;

describe("FailureBackoff", () => {
  it("starts at one lease duration and doubles per failure in a row up to the cap", () => {
    const backoff = new FailureBackoff(60_000);
    const delays = Array.from({ length: 6 }, () => backoff.failed("t:0", NOW).until - NOW);
    assert.deepEqual(delays, [60_000, 120_000, 240_000, BACKOFF_CAP_MS, BACKOFF_CAP_MS, BACKOFF_CAP_MS]);
  });

  it("caps at the lease duration when a lease lasts longer than the cap", () => {
    const backoff = new FailureBackoff(3_600_000);
    assert.deepEqual(
      [backoff.failed("t:0", NOW).until, backoff.failed("t:0", NOW).until],
      [NOW + 3_600_000, NOW + 3_600_000],
    );
  });

  it("starts over after a term that ended well, and publishes only backoffs not over yet", () => {
    const backoff = new FailureBackoff(10_000);
    backoff.failed("t:0", NOW);
    backoff.failed("t:0", NOW);
    backoff.failed("t:1", NOW);
    backoff.recovered("t:0");

    assert.equal(backoff.failed("t:0", NOW).failures, 1);
    assert.deepEqual(
      backoff.pending(NOW + 5_000),
      new Map([
        ["t:0", NOW + 10_000],
        ["t:1", NOW + 10_000],
      ]),
    );
    assert.deepEqual(backoff.pending(NOW + 10_000), new Map());
  });
});
