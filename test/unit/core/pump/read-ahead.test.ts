import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type ChainLink, ReadAhead, ReadAheadBudget } from "../../../../lib/core/pump/read-ahead.js";

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
    calls[0]?.answer({ next: 8, bytes: 0, value: "5..7" });
    await settle();
    assert.deepEqual(
      calls.map((c) => c.offset),
      [5, 8],
      "the next fetch starts once the last is in",
    );
    calls[1]?.answer({ next: 12, bytes: 0, value: "8..11" });
    await settle();
    assert.equal(calls.length, 2, "two results wait: the chain pauses");

    assert.equal(await ahead.next(), "5..7");
    await settle();
    assert.deepEqual(
      calls.map((c) => c.offset),
      [5, 8, 12],
      "taking one resumes the chain where it paused",
    );
    calls[2]?.answer({ next: 12, bytes: 0, value: "nothing new" });
    assert.equal(await ahead.next(), "8..11");
    assert.equal(await ahead.next(), "nothing new");
  });

  it("goes on after a result that was taken before it came in", async () => {
    const { calls, fetch } = manualFetch();
    const ahead = new ReadAhead(fetch, 0, 1);
    const first = ahead.next();
    calls[0]?.answer({ next: 4, bytes: 100, value: "0..3" });

    assert.equal(await first, "0..3");
    await settle();
    assert.deepEqual(
      calls.map((c) => c.offset),
      [0, 4],
    );
  });

  it("pauses every chain once the shared budget is spent, and gives back what it did not hand out", async () => {
    const budget = new ReadAheadBudget(150);
    const a = manualFetch();
    const b = manualFetch();
    const aheadA = new ReadAhead(a.fetch, 0, 5, budget);
    const aheadB = new ReadAhead(b.fetch, 0, 5, budget);
    a.calls[0]?.answer({ next: 1, bytes: 100, value: "a0" });
    b.calls[0]?.answer({ next: 1, bytes: 100, value: "b0" });
    await settle();

    assert.equal(budget.used, 200);
    assert.equal(budget.spent, true);
    // The first result in spent the budget for both: neither reads further until it hands out.
    assert.deepEqual([a.calls.length, b.calls.length].sort(), [1, 2]);
    assert.equal(await aheadA.next(), "a0");
    assert.equal(await aheadB.next(), "b0");
    assert.equal(budget.used, 0);
    await settle();
    assert.equal(a.calls.length, 2);
    assert.equal(b.calls.length, 2);

    a.calls[1]?.answer({ next: 2, bytes: 40, value: "a1" });
    await settle();
    assert.equal(budget.used, 40);
    aheadA.close();
    aheadB.close();
    assert.equal(budget.used, 0, "a closed chain gives back what waited");
  });

  it("hands out a result that is in already, only when it is accepted, held until released", async () => {
    const budget = new ReadAheadBudget(1_000);
    const { calls, fetch } = manualFetch();
    const ahead = new ReadAhead(fetch, 0, 2, budget);
    assert.equal(
      ahead.takeReady(() => true),
      null,
      "nothing is in yet",
    );
    calls[0]?.answer({ next: 4, bytes: 100, value: "0..3" });
    await settle();
    calls[1]?.answer({ next: 9, bytes: 50, value: "4..8" });
    await settle();
    assert.equal(calls.length, 2, "two results wait: the chain pauses");
    assert.equal(budget.used, 150);

    assert.equal(
      ahead.takeReady((v) => v === "not this one"),
      null,
      "refused: it stays",
    );
    const taken = ahead.takeReady((v) => v === "0..3");
    assert.equal(taken?.value, "0..3");
    assert.equal(budget.used, 150, "taken along into a write, it is still held");
    taken?.release();
    taken?.release();
    assert.equal(budget.used, 50, "released (once) when the write is over");
    await settle();
    assert.deepEqual(
      calls.map((c) => c.offset),
      [0, 4, 9],
      "taking one resumes the chain where it paused",
    );
    assert.equal(await ahead.next(), "4..8", "next() goes on in order");
    assert.equal(
      ahead.takeReady(() => true),
      null,
      "the fetch from 9 is not in",
    );
  });

  it("goes on after pausing with nothing waiting: the budget spent when a taken result came in", async () => {
    const { calls, fetch } = manualFetch();
    const ahead = new ReadAhead(fetch, 0, 2, new ReadAheadBudget(0));
    const first = ahead.next();
    calls[0]?.answer({ next: 5, bytes: 100, value: "0..4" });
    assert.equal(await first, "0..4");
    await settle();
    assert.equal(calls.length, 1, "paused: the budget is spent");

    const second = ahead.next();
    assert.deepEqual(
      calls.map((c) => c.offset),
      [0, 5],
    );
    calls[1]?.answer({ next: 9, bytes: 100, value: "5..8" });
    assert.equal(await second, "5..8");
  });

  it("says when the oldest result is in, and not while the shared budget is spent", async () => {
    const budget = new ReadAheadBudget(150);
    const { calls, fetch } = manualFetch();
    const ahead = new ReadAhead(fetch, 0, 2, budget);
    const onItsWay = ahead.oldestOnItsWay();
    assert.notEqual(onItsWay, null);
    calls[0]?.answer({ next: 4, bytes: 100, value: "0..3" });
    await onItsWay;
    assert.equal(ahead.oldestOnItsWay(), null, "in already");
    assert.equal(ahead.takeReady(() => true)?.value, "0..3");
    assert.notEqual(ahead.oldestOnItsWay(), null, "the fetch from 4 is on its way");
    budget.take(100);
    assert.equal(ahead.oldestOnItsWay(), null, "budget spent: taking it would read on past it");
  });

  it("ends the chain at a result without a next offset", async () => {
    const { calls, fetch } = manualFetch();
    const ahead = new ReadAhead(fetch, 0, 3);
    calls[0]?.answer({ next: null, bytes: 0, value: "stopped" });
    await settle();

    assert.equal(await ahead.next(), "stopped");
    assert.equal(calls.length, 1);
    assert.throws(() => ahead.next(), /ended/);
  });

  it("refuses a depth below one and a negative budget", () => {
    assert.throws(() => new ReadAhead(manualFetch().fetch, 0, 0), /depth must be >= 1, got 0/);
    assert.throws(() => new ReadAheadBudget(-1), /budget must be a whole number of bytes >= 0, got -1/);
  });
});
