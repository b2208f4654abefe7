/**
 * RunLeases.handOver: a lease asked for is handed to the asker while its heartbeat is live, and
 * released when the asker has gone since it asked, so it does not sit with a worker that will
 * never pump it until its fresh expiry. giveBack and finish: what a run gives back at once (a
 * failed partition, a lease asked for) and what it keeps for its end.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { TopicPartition } from "../../../../lib/core/model.js";
import type { Lease, LeaseStore } from "../../../../lib/core/ports.js";
import { HeldLease } from "../../../../lib/core/pump/held-lease.js";
import { RunLeases } from "../../../../lib/core/run/run-leases.js";
import { FakeClock } from "../../../helpers/fake-clock.js";
import { storeWith } from "../../../helpers/fake-leases.js";
import { CapturingLogger } from "../../../helpers/fake-observability.js";
import { InMemoryLeaseStore } from "../../../helpers/memory-lease-store.js";

const src: TopicPartition = { topic: "src", partition: 0 };
const FAR = Number.MAX_SAFE_INTEGER;

/** The leases of a run of 10 s leases and a 1 s write margin. */
function runLeases(store: LeaseStore, clock: FakeClock, logger: CapturingLogger): RunLeases {
  return new RunLeases({ store, clock, logger, durationMs: 10_000, writeSafetyMarginMs: 1_000 });
}

async function askedFor(asker: { expiresAt: number; deadline?: number } | null) {
  const clock = new FakeClock(1_000_000);
  const store = new InMemoryLeaseStore();
  await store.ensure([src]);
  const claimed = await store.claim(store.get(src) as Lease, "A", clock.now() + 60_000);
  assert.ok(claimed);
  if (asker !== null) {
    await store.heartbeat({
      workerId: "B",
      slot: "B",
      startedAt: clock.now() - 5_000,
      draining: false,
      deadline: asker.deadline ?? FAR,
      expiresAt: asker.expiresAt,
    });
  }
  assert.ok(await store.requestHandoff(claimed, "B"));
  const held = new HeldLease(store.get(src) as Lease, { source: src, target: src }, FAR);
  const logger = new CapturingLogger();
  return { clock, store, held, logger };
}

describe("RunLeases.handOver", () => {
  it("hands the lease to a live asker, with a fresh expiry", async () => {
    const { clock, store, held, logger } = await askedFor({ expiresAt: 1_000_000 + 15_000 });
    await runLeases(store, clock, logger).handOver(held);

    assert.equal(store.get(src)?.owner, "B");
    assert.equal(store.get(src)?.expiresAt, clock.now() + 10_000);
  });

  it("releases the lease when the asker's heartbeat expired since it asked (regression: idle until expiry)", async () => {
    const { clock, store, held, logger } = await askedFor({ expiresAt: 1_000_000 - 1 });
    await runLeases(store, clock, logger).handOver(held);

    assert.equal(store.get(src)?.owner, null, "handed to a worker that has gone");
    assert.ok(logger.entries.some((e) => /asked for the lease has gone/.test(e.message)));
  });

  it("releases the lease when the asker withdrew its request after its heartbeat was read (regression: the refused handover left it idle until it expired)", async () => {
    const { clock, store, held, logger } = await askedFor({ expiresAt: 1_000_000 + 15_000 });
    const racing = storeWith(store, {
      worker: async (id) => {
        const alive = await store.worker(id);
        // The asker's run ends between this read and the handover.
        assert.ok(await store.withdrawHandoff(store.get(src) as Lease, "B"));
        return alive;
      },
    });
    await runLeases(racing, clock, logger).handOver(held);

    assert.equal(store.get(src)?.owner, null);
    assert.ok(logger.entries.some((e) => /handover refused; releasing it/.test(e.message)));
  });

  it("releases the lease when the asker has no item any more", async () => {
    const { clock, store, held, logger } = await askedFor(null);
    await runLeases(store, clock, logger).handOver(held);

    assert.equal(store.get(src)?.owner, null);
  });

  it("releases the lease when the asker's run has reached its stop, though its heartbeat is live: it takes nothing more", async () => {
    // Its deadline is 1 s away, our margin 1 s: it stops writing and taking leases now.
    const { clock, store, held, logger } = await askedFor({
      expiresAt: 1_000_000 + 15_000,
      deadline: 1_001_000,
    });
    await runLeases(store, clock, logger).handOver(held);

    assert.equal(store.get(src)?.owner, null);
  });

  it("releases the lease when the asker's item cannot be read: a live asker claims it at its next poll", async () => {
    const { clock, store, held, logger } = await askedFor(null);
    const failing = storeWith(store, {
      worker: async () => {
        throw new Error("throttled");
      },
    });
    await runLeases(failing, clock, logger).handOver(held);

    assert.equal(store.get(src)?.owner, null);
  });
});

describe("RunLeases.giveBack and finish", () => {
  async function held(store: InMemoryLeaseStore, tp: TopicPartition): Promise<HeldLease> {
    await store.ensure([tp]);
    const claimed = await store.claim(store.get(tp) as Lease, "A", 2_000_000);
    assert.ok(claimed);
    return new HeldLease(claimed, { source: tp, target: tp }, FAR);
  }

  it("giveBack releases a lease nobody asked for at once; finish waits for it", async () => {
    const clock = new FakeClock(1_000_000);
    const store = new InMemoryLeaseStore();
    const leases = runLeases(store, clock, new CapturingLogger());
    const lease = await held(store, src);

    leases.giveBack(lease);
    assert.deepEqual([...leases.givingBack], ["src:0"]);
    await leases.finish();

    assert.deepEqual([...leases.givingBack], []);
    assert.equal(store.get(src)?.owner, null);
  });

  it("finish releases the leases kept, except one resumed since", async () => {
    const clock = new FakeClock(1_000_000);
    const store = new InMemoryLeaseStore();
    const leases = runLeases(store, clock, new CapturingLogger());
    const other: TopicPartition = { topic: "src", partition: 1 };
    leases.keep("src:0", await held(store, src));
    leases.keep("src:1", await held(store, other));
    leases.resumed("src:1");

    await leases.finish();

    assert.deepEqual([store.get(src)?.owner, store.get(other)?.owner], [null, "A"]);
  });
});
