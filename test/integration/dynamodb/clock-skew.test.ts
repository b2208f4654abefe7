/**
 * A worker whose clock is off DynamoDB's says so (clock-skew.ts): the lease store's client
 * compares each answer's Date header, from DynamoDB Local here, with the worker's clock. Clocks
 * 10 s ahead and behind are named, once however many calls; an agreeing clock is not.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { systemClock } from "../../../lib/core/clock.js";
import type { Clock } from "../../../lib/core/ports.js";
import { CLOCK_SKEW_WARN_MS } from "../../../lib/dynamodb/clock-skew.js";
import { createLeaseStore } from "../../../lib/wiring.js";
import { useDynamoDbLocal } from "../../helpers/dynamodb-local.js";
import { CapturingLogger } from "../../helpers/fake-observability.js";

/** The system clock moved by `offsetMs`. */
function offsetClock(offsetMs: number): Clock {
  return { now: () => Date.now() + offsetMs, sleep: systemClock.sleep };
}

describe("the lease store's clock check against DynamoDB", () => {
  const local = useDynamoDbLocal();

  /** Three lease-store calls per store, each store made anew on one client (as a warm function's runs). */
  const calls = async (offsetMs: number, stores = 1) => {
    const table = await local.freshLeaseTable();
    const client = local.ddb.client();
    const logger = new CapturingLogger();
    try {
      for (let s = 0; s < stores; s++) {
        const store = createLeaseStore(
          { leases: { table } } as Parameters<typeof createLeaseStore>[0],
          { dynamodb: client },
          { logger, clock: offsetClock(offsetMs) },
        );
        for (let i = 0; i < 3; i++) await store.list();
      }
      return logger.at("warn").filter((e) => e.message.includes("clock"));
    } finally {
      client.destroy();
    }
  };

  it("names a clock 10 s ahead, once", async () => {
    const warnings = await calls(10_000);

    assert.equal(warnings.length, 1, JSON.stringify(warnings));
    assert.equal(warnings[0]?.message, "this worker's clock is ahead of DynamoDB's");
    const skew = warnings[0]?.fields.skewMsAtLeast as number;
    assert.ok(skew >= 8_000 && skew <= 10_000, `skewMsAtLeast ${skew}`);
  });

  it("names a clock 10 s behind", async () => {
    const warnings = await calls(-10_000);

    assert.equal(warnings.length, 1, JSON.stringify(warnings));
    assert.equal(warnings[0]?.message, "this worker's clock is behind DynamoDB's");
    assert.ok((warnings[0]?.fields.skewMsAtLeast as number) >= CLOCK_SKEW_WARN_MS);
  });

  it("names it once per client, however many lease stores the client serves", async () => {
    assert.equal((await calls(10_000, 3)).length, 1);
  });

  it("says nothing of a clock that agrees", async () => {
    assert.deepEqual(await calls(0), []);
  });
});
