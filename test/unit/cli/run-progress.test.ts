/** run's progress: the rate over the last window, not since the start, and the current lag. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RateWindow, RunTally } from "../../../lib/cli/run-progress.js";

describe("RateWindow", () => {
  it("gives the rate of the last 10 s, so a stall after a fast hour shows as 0", () => {
    const window = new RateWindow(10_000);
    window.sample(0, 0);
    for (let s = 1; s <= 3_600; s++) window.sample(s * 1_000, s * 1_000); // 1,000 rec/s for an hour
    assert.equal(window.sample(3_601_000, 3_600_000), 900);
    let rate = 0;
    for (let s = 3_602; s <= 3_612; s++) rate = window.sample(s * 1_000, 3_600_000);
    assert.equal(rate, 0);
  });
});

describe("RunTally", () => {
  it("keeps each partition's lag from its last batch and tells the logger that copying works", () => {
    let healthy = 0;
    const tally = new RunTally({ logger: { healthy: () => healthy++ } });
    tally.batchCopied({
      topic: "A",
      partition: 0,
      records: 10,
      bytes: 100,
      nextOffset: 10,
      highWatermark: 50,
    });
    tally.batchCopied({ topic: "A", partition: 1, records: 5, bytes: 50, nextOffset: 5, highWatermark: 7 });
    tally.batchCopied({
      topic: "A",
      partition: 0,
      records: 30,
      bytes: 300,
      nextOffset: 40,
      highWatermark: 60,
    });
    assert.equal(tally.lag, 20 + 2);
    assert.equal(tally.records, 45);
    assert.equal(healthy, 3);
  });
});
