import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type ChainLink, ReadAhead } from "../../../lib/core/read-ahead.js";

/** A fetch the test answers by hand: each call waits until answered. */
function manualFetch() {
  const calls: { offset: number; answer(link: ChainLink<string>): void }[] = [];
  const fetch = (offset: number) =>
    new Promise<ChainLink<string>>((resolve) => {
      calls.push({ offset, answer: resolve });
    });
  return { calls, fetch };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("ReadAhead", () => {
  it("chains fetches one at a time, holds at most `depth` results, and hands them out in order", async () => {
    const { calls, fetch } = manualFetch();
    const ahead = new ReadAhead(fetch, 5, 2);
    calls[0]?.answer({ next: 8, value: "5..7" });
    await settle();
    assert.deepEqual(
      calls.map((c) => c.offset),
      [5, 8],
      "the next fetch starts once the last is in",
    );
    calls[1]?.answer({ next: 12, value: "8..11" });
    await settle();
    assert.equal(calls.length, 2, "two results wait: the chain pauses");

    assert.equal(await ahead.next(), "5..7");
    await settle();
    assert.deepEqual(
      calls.map((c) => c.offset),
      [5, 8, 12],
      "taking one resumes the chain where it paused",
    );
    calls[2]?.answer({ next: 12, value: "nothing new" });
    assert.equal(await ahead.next(), "8..11");
    assert.equal(await ahead.next(), "nothing new");
  });

  it("ends the chain at a result without a next offset", async () => {
    const { calls, fetch } = manualFetch();
    const ahead = new ReadAhead(fetch, 0, 3);
    calls[0]?.answer({ next: null, value: "stopped" });
    await settle();

    assert.equal(await ahead.next(), "stopped");
    assert.equal(calls.length, 1);
    assert.throws(() => ahead.next(), /ended/);
  });

  it("refuses a depth below one", () => {
    assert.throws(() => new ReadAhead(manualFetch().fetch, 0, 0), /depth must be >= 1, got 0/);
  });
});
