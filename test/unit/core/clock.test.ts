/** The real clock (lib/core/clock.ts): a sleep never resolves before pending I/O callbacks. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { systemClock } from "../../../lib/core/clock.js";

describe("systemClock.sleep", () => {
  it("yields to the event loop when there is nothing to wait for (regression: issue 13's stall)", async () => {
    // Prepare: a callback queued as an I/O completion would be.
    for (const signal of [undefined, AbortSignal.abort()]) {
      let ran = false;
      setImmediate(() => {
        ran = true;
      });

      // Act
      await systemClock.sleep(0, signal);

      // Assess: a loop of such sleeps cannot starve sockets and timers.
      assert.equal(ran, true, `sleep(0${signal ? ", aborted" : ""}) resolved before the event loop turned`);
    }
  });

  it("still waits the time asked for", async () => {
    const start = Date.now();
    await systemClock.sleep(30);
    assert.ok(Date.now() - start >= 25, `slept ${Date.now() - start} ms`);
  });
});
