import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Clock } from "../../../lib/core/ports.js";
import { backoffDelay, retryRetryable, retryUntil } from "../../../lib/core/retry.js";
import { ReplicatorError } from "../../../lib/errors.js";

/** A clock whose sleeps advance time at once, so the deadline arithmetic is exact. */
function steppingClock(start = 0): Clock & { slept: number[] } {
  let now = start;
  const slept: number[] = [];
  return {
    slept,
    now: () => now,
    sleep: async (ms) => {
      slept.push(ms);
      now += ms;
    },
  };
}

const always = () => true;

describe("retryUntil", () => {
  it("returns the first success and passes the attempt number", async () => {
    const clock = steppingClock();
    const seen: number[] = [];
    const value = await retryUntil(
      async (n) => {
        seen.push(n);
        if (n < 2) throw new Error(`fail ${n}`);
        return "ok";
      },
      { clock, retryable: always, random: () => 1 },
    );
    assert.equal(value, "ok");
    assert.deepEqual(seen, [0, 1, 2]);
    assert.deepEqual(clock.slept, [100, 200]);
  });

  it("rethrows a failure that is not retryable without pausing", async () => {
    const clock = steppingClock();
    const error = new Error("fatal");
    await assert.rejects(
      retryUntil(
        async () => {
          throw error;
        },
        { clock, retryable: (e) => e !== error },
      ),
      error,
    );
    assert.deepEqual(clock.slept, []);
  });

  it("never pauses past the deadline and starts no attempt after it", async () => {
    const clock = steppingClock(1_000);
    let attempts = 0;
    await assert.rejects(
      retryUntil(
        async () => {
          attempts++;
          throw new Error("down");
        },
        { clock, retryable: always, deadline: 1_250, random: () => 1 },
      ),
      /down/,
    );
    // 100 ms, then 149 ms (cut from 200 so the last attempt starts before the deadline).
    assert.deepEqual(clock.slept, [100, 149]);
    assert.equal(attempts, 3);
    assert.ok(clock.now() <= 1_250);
  });

  it("reads a moving deadline afresh on every attempt", async () => {
    const clock = steppingClock();
    let deadline = 150;
    let attempts = 0;
    await assert.rejects(
      retryUntil(
        async () => {
          attempts++;
          if (attempts <= 3) deadline += 100; // e.g. a lease renewed while retrying
          throw new Error("down");
        },
        { clock, retryable: always, deadline: () => deadline, random: () => 1 },
      ),
    );
    assert.ok(attempts > 2, `a fixed deadline of 150 would allow 2 attempts, got ${attempts}`);
  });

  it("stops when the signal aborts and rethrows the last failure", async () => {
    const clock = steppingClock();
    const controller = new AbortController();
    await assert.rejects(
      retryUntil(
        async (n) => {
          if (n === 1) controller.abort();
          throw new Error(`fail ${n}`);
        },
        { clock, retryable: always, signal: controller.signal },
      ),
      /fail 1/,
    );
  });
});

describe("backoffDelay", () => {
  it("doubles from initialMs up to maxMs, jittered within [base/2, base]", () => {
    const policy = { initialMs: 100, maxMs: 1_000 };
    assert.equal(
      backoffDelay(0, policy, () => 1),
      100,
    );
    assert.equal(
      backoffDelay(3, policy, () => 1),
      800,
    );
    assert.equal(
      backoffDelay(10, policy, () => 1),
      1_000,
    );
    assert.equal(
      backoffDelay(10, policy, () => 0),
      500,
    );
  });
});

describe("retryRetryable", () => {
  const transient = () => new ReplicatorError("KAFKA_RETRIABLE", "broker briefly unavailable");

  it("retries a retryable ReplicatorError and names the call on each retry", async () => {
    const clock = steppingClock(1_000);
    const retried: string[] = [];
    let calls = 0;
    const result = await retryRetryable(
      "listing topics",
      async () => {
        if (++calls < 3) throw transient();
        return "topics";
      },
      { clock, deadline: 60_000, onRetry: (what, _error, attempt) => retried.push(`${what} #${attempt}`) },
    );
    assert.equal(result, "topics");
    assert.deepEqual(retried, ["listing topics #0", "listing topics #1"]);
  });

  it("does not retry a non-retryable error, nor one that is not ours", async () => {
    const clock = steppingClock();
    for (const error of [new ReplicatorError("KAFKA_FATAL", "bad request"), new Error("bug")]) {
      let calls = 0;
      await assert.rejects(
        retryRetryable(
          "x",
          async () => {
            calls++;
            throw error;
          },
          { clock, deadline: 60_000 },
        ),
        error,
      );
      assert.equal(calls, 1);
    }
  });

  it("reads a deadline function when the call starts: a per-call budget", async () => {
    const clock = steppingClock(10_000);
    await assert.rejects(
      retryRetryable(
        "x",
        async () => {
          throw transient();
        },
        { clock, deadline: () => clock.now() + 2_000 },
      ),
      { code: "KAFKA_RETRIABLE" },
    );
    assert.ok(clock.now() < 12_000, `gave up by the budget from the call's start, at ${clock.now()}`);
    assert.ok(clock.now() > 11_000, "retried for most of its budget");
  });

  it("retries only what a narrower `retryable` accepts, so it does not stack on retrying parts", async () => {
    const clock = steppingClock();
    const waiting = new ReplicatorError("TARGET_TRANSACTION_OPEN", "open transaction");
    const only = (e: unknown) => e === waiting;
    let calls = 0;
    const got = await retryRetryable(
      "x",
      async () => {
        if (++calls < 3) throw waiting;
        return "read";
      },
      { clock, deadline: 60_000 },
      only,
    );
    assert.equal(got, "read");
    calls = 0;
    await assert.rejects(
      retryRetryable(
        "x",
        async () => {
          calls++;
          throw transient();
        },
        { clock, deadline: 60_000 },
        only,
      ),
      { code: "KAFKA_RETRIABLE" },
    );
    assert.equal(calls, 1);
  });
});
