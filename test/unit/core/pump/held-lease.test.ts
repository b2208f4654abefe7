/**
 * A renewal and a checkpoint of one held lease run side by side (the worker's renewer, the pump's
 * checkpointer), and their answers may come back in either order. The lease the holder keeps
 * must not go back on what either write said: a renewal answered after a checkpoint must not
 * take the checkpoint (and its offset map) back to before it, and neither answer may drop a
 * handoff request the other brought.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { checkpointWrite } from "../../../../lib/core/lease/checkpoint.js";
import type { TopicPartition } from "../../../../lib/core/model.js";
import type { Lease } from "../../../../lib/core/ports.js";
import { HeldLease, LeaseGuard } from "../../../../lib/core/pump/held-lease.js";
import { RunLeases } from "../../../../lib/core/run/run-leases.js";
import { ReplicatorError } from "../../../../lib/errors.js";
import { FakeClock } from "../../../helpers/fake-clock.js";
import { storeWith } from "../../../helpers/fake-leases.js";
import { CapturingLogger } from "../../../helpers/fake-observability.js";
import { InMemoryLeaseStore } from "../../../helpers/memory-lease-store.js";

const src: TopicPartition = { topic: "src", partition: 0 };
const dst: TopicPartition = { topic: "dst", partition: 0 };
const FAR = Number.MAX_SAFE_INTEGER;

async function held(store: InMemoryLeaseStore, clock: FakeClock): Promise<HeldLease> {
  await store.ensure([src]);
  const claimed = await store.claim(store.get(src) as Lease, "A", clock.now() + 60_000);
  assert.ok(claimed);
  return new HeldLease(claimed, { source: src, target: dst }, FAR);
}

/** A renewal the store applies at once, whose answer is handed back only when `release` is called. */
function lateRenewal(store: InMemoryLeaseStore) {
  let release: () => void = () => {};
  const answered = new Promise<void>((resolve) => {
    release = resolve;
  });
  const wrapped = storeWith(store, {
    renew: async (lease, expiresAt) => {
      const applied = await store.renew(lease, expiresAt);
      await answered;
      return applied;
    },
  });
  return { store: wrapped, release: () => release() };
}

describe("HeldLease: answers of concurrent writes", () => {
  it("a renewal answered after a checkpoint keeps the checkpoint, its offset map and no false origin", async () => {
    const clock = new FakeClock();
    const store = new InMemoryLeaseStore();
    const lease = await held(store, clock);
    const late = lateRenewal(store);
    const leases = new RunLeases({
      store: late.store,
      clock,
      logger: new CapturingLogger(),
      durationMs: 60_000,
      writeSafetyMarginMs: 1_000,
    });

    // The renewal lands first (before the pin), its answer is slow.
    const renewing = leases.renewAll([lease], clock.now() + 120_000);
    await new Promise((resolve) => setImmediate(resolve));
    // The pump's first checkpoint (the pin, with its target position): the origin of the map.
    lease.update(await store.checkpoint(lease.lease, 100, clock.now(), 40));
    late.release();
    await renewing;

    assert.equal(lease.lease.checkpoint, 100, "the checkpoint went back to before the pin");
    assert.equal(lease.lease.expiresAt, clock.now() + 120_000);
    // The next checkpoint's write, as the store builds it from the held lease: the pin stays the
    // map's origin, and 500 is not one ("nothing copied before target 450"), since 100..499 were
    // copied before it.
    const { changes } = checkpointWrite(
      lease.lease,
      { owner: "A", counter: lease.lease.counter },
      500,
      clock.now(),
      {
        targetOffset: 450,
        source: undefined,
      },
    );
    assert.deepEqual(changes.set.offsetMap, [
      { source: 100, target: 40, origin: true },
      { source: 500, target: 450 },
    ]);
  });

  it("an answer without the handoff request does not drop the one an earlier answer brought", async () => {
    const clock = new FakeClock();
    const store = new InMemoryLeaseStore();
    const lease = await held(store, clock);
    const late = lateRenewal(store);
    const leases = new RunLeases({
      store: late.store,
      clock,
      logger: new CapturingLogger(),
      durationMs: 60_000,
      writeSafetyMarginMs: 1_000,
    });

    const renewing = leases.renewAll([lease], clock.now() + 120_000);
    await new Promise((resolve) => setImmediate(resolve));
    assert.ok(await store.requestHandoff(store.get(src) as Lease, "B"));
    lease.update(await store.checkpoint(lease.lease, 100, clock.now()));
    assert.ok(lease.handoffRequested);
    late.release();
    await renewing;

    assert.ok(lease.handoffRequested, "the renewal's older answer dropped the handoff request");
    assert.equal(lease.lease.handoffTo, "B");
    // So the worker hands it over to the asker rather than keeping it until the end of the run.
    assert.ok(await store.handOver(lease.lease, clock.now() + 60_000));
    assert.equal((store.get(src) as Lease).owner, "B");
  });
});

describe("LeaseGuard.retry", () => {
  it("logs each retry with its cause: the error's message, code and details (regression: 'fetch failed, attempt 9' alone)", async () => {
    // Prepare
    const clock = new FakeClock();
    const store = new InMemoryLeaseStore();
    const lease = await held(store, clock);
    const logger = new CapturingLogger();
    const guard = new LeaseGuard(lease, clock, logger, { writeSafetyMarginMs: 0 });
    let calls = 0;

    // Act
    const result = await guard.retry("fetch failed", async () => {
      if (++calls < 3)
        throw new ReplicatorError("KAFKA_RETRIABLE", "fetch src/0: connect ECONNREFUSED 127.0.0.1:9092", {
          details: { broker: "127.0.0.1:9092" },
        });
      return "ok";
    });

    // Assess
    assert.equal(result, "ok");
    const warnings = logger.at("warn");
    assert.equal(warnings.length, 2);
    assert.deepEqual(
      [
        warnings[1]?.message,
        warnings[1]?.fields.error,
        warnings[1]?.fields.code,
        warnings[1]?.fields.attempt,
      ],
      ["fetch failed", "fetch src/0: connect ECONNREFUSED 127.0.0.1:9092", "KAFKA_RETRIABLE", 1],
    );
    assert.deepEqual(warnings[1]?.fields.details, { broker: "127.0.0.1:9092" });
  });
});
