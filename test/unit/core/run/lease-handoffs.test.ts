/**
 * Handoffs no pump acts on (lib/core/run/lease-handoffs.ts): a lease handed to us that another
 * worker asked for is passed on, or released when the asker has gone; a run's requests are
 * withdrawn at its end, or the lease released when it was handed over first. Over the in-memory
 * store that evaluates DynamoDB's conditions.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Lease, WorkerRecord } from "../../../../lib/core/ports.js";
import { askerAlive, passOn, withdrawRequests } from "../../../../lib/core/run/lease-handoffs.js";
import { storeWith } from "../../../helpers/fake-leases.js";
import { InMemoryLeaseStore } from "../../../helpers/memory-lease-store.js";

const NOW = 1_000_000;
const DURATION = 10_000;
const TP = { topic: "t", partition: 0 };

/** "me" holds t:0 and X asked for it; X's heartbeat expires at `askerExpiresAt`. */
async function askedByX(askerExpiresAt: number) {
  const store = new InMemoryLeaseStore();
  await store.ensure([TP]);
  assert.ok(await store.claim(store.get(TP) as Lease, "me", NOW + DURATION));
  await store.heartbeat(beat("X", askerExpiresAt));
  assert.ok(await store.requestHandoff(store.get(TP) as Lease, "X"));
  return { store, lease: store.get(TP) as Lease };
}

function beat(workerId: string, expiresAt: number) {
  return {
    workerId,
    slot: workerId,
    startedAt: NOW - 5_000,
    draining: false,
    deadline: expiresAt,
    expiresAt,
  };
}

const withdrawal = (store: InMemoryLeaseStore, late = () => false) => ({
  store,
  workerId: "me",
  concurrency: 4,
  late,
});

describe("passOn", () => {
  it("hands a lease to a live asker", async () => {
    const { store, lease } = await askedByX(NOW + 5_000);
    await passOn({ store, workerId: "me", durationMs: DURATION }, lease, NOW);
    assert.equal(store.get(TP)?.owner, "X");
  });

  it("releases a lease whose asker has gone instead of handing it over (regression: idle with a gone asker until it expired)", async () => {
    const { store, lease } = await askedByX(NOW - 1);
    await passOn({ store, workerId: "me", durationMs: DURATION }, lease, NOW);
    assert.deepEqual([store.get(TP)?.owner, store.get(TP)?.handoffTo], [null, null]);
  });

  it("releases a lease whose asker withdrew after it was read (the handover is refused)", async () => {
    const { store, lease } = await askedByX(NOW + 5_000);
    assert.ok(await store.withdrawHandoff(lease, "X"));
    await passOn({ store, workerId: "me", durationMs: DURATION }, lease, NOW);
    assert.equal(store.get(TP)?.owner, null);
  });
});

describe("askerAlive", () => {
  it("reads the asker's item consistently: a stale read of its live heartbeat does not count", async () => {
    const { store } = await askedByX(NOW - 1);
    const stale: WorkerRecord = { ...beat("X", NOW + 5_000), assignment: null };
    const eventual = storeWith(store, {
      worker: async (id, options) => (options?.consistent === true ? store.worker(id) : stale),
    });
    assert.equal(await askerAlive(eventual, "X", NOW, 0), false);
  });

  it("counts an asker whose run has reached its stop (deadline less the margin) as gone", async () => {
    const store = new InMemoryLeaseStore();
    await store.heartbeat({ ...beat("X", NOW + 5_000), deadline: NOW + 1_000 });
    assert.equal(await askerAlive(store, "X", NOW, 999), true);
    assert.equal(await askerAlive(store, "X", NOW, 1_000), false);
  });
});

describe("withdrawRequests", () => {
  it("withdraws our request; the holder keeps the lease", async () => {
    const store = new InMemoryLeaseStore();
    await store.ensure([TP]);
    assert.ok(await store.claim(store.get(TP) as Lease, "H", NOW + DURATION));
    assert.ok(await store.requestHandoff(store.get(TP) as Lease, "me"));

    await withdrawRequests(withdrawal(store), ["t:0"]);

    assert.deepEqual([store.get(TP)?.owner, store.get(TP)?.handoffTo], ["H", null]);
  });

  it("releases a lease handed over between its read and the withdrawal", async () => {
    const store = new InMemoryLeaseStore();
    await store.ensure([TP]);
    assert.ok(await store.claim(store.get(TP) as Lease, "H", NOW + DURATION));
    assert.ok(await store.requestHandoff(store.get(TP) as Lease, "me"));
    const racing = storeWith(store, {
      withdrawHandoff: async (observed, requester) => {
        assert.ok(await store.handOver(store.get(TP) as Lease, NOW + DURATION));
        return store.withdrawHandoff(observed, requester);
      },
    });

    await withdrawRequests({ ...withdrawal(store), store: racing }, ["t:0"]);

    assert.equal(store.get(TP)?.owner, null, "handed to a run that has ended");
  });

  it("reads nothing once late", async () => {
    const store = new InMemoryLeaseStore();
    await store.ensure([TP]);
    await withdrawRequests(
      withdrawal(store, () => true),
      ["t:0"],
    );
    assert.equal(store.calls.lease, 0);
  });
});
