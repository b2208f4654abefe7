/**
 * The protocol's own items: heartbeat (with its backoff), assignment, removal and the leader
 * item, the condition each write is under, and that none of them, readable or not, gets in the
 * way of reading leases; and the lease items a store cannot read.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ChangeSet } from "../../../lib/core/lease/table.js";
import type { WorkerHeartbeat } from "../../../lib/core/ports.js";
import { isReplicatorError } from "../../../lib/errors.js";
import { type ConformanceBackend, claimed, ensureOne, fixture, MINUTE } from "./backend.js";

const NOW = 1_700_000_000_000;

function beat(workerId: string, fields: Partial<WorkerHeartbeat> = {}): WorkerHeartbeat {
  return {
    workerId,
    slot: "3",
    startedAt: NOW,
    draining: false,
    deadline: NOW + 60_000,
    expiresAt: NOW + 15_000,
    ...fields,
  };
}

export function coordinationCases(backend: ConformanceBackend): void {
  describe("coordination items", () => {
    it("a heartbeat creates the worker item and returns the assignment the leader wrote, which later heartbeats keep", async () => {
      const { store } = await fixture(backend);
      assert.equal((await store.heartbeat(beat("w1"))).assignment, null);
      assert.equal(await store.assign("w1", ["t:0", "t:1"]), true);

      const again = await store.heartbeat(beat("w1", { draining: true, expiresAt: NOW + 20_000 }));
      assert.deepEqual(again, {
        ...beat("w1", { draining: true, expiresAt: NOW + 20_000 }),
        assignment: ["t:0", "t:1"],
      });
      const forgot = await store.heartbeat(beat("w1"), { forgetAssignment: true });
      assert.equal(forgot.assignment, null);
    });

    it("a heartbeat publishes the worker's backoff for the leader's scan and a heartbeat without one removes it", async () => {
      const { store } = await fixture(backend);
      const backoff = new Map([
        ["orders:1", NOW + 60_000],
        ["my.topic-2:0", NOW + 120_000],
      ]);

      const first = await store.heartbeat(beat("w1", { backoff }));
      const scanned = (await store.scan()).workers[0];
      const cleared = await store.heartbeat(beat("w1"));

      assert.deepEqual(first.backoff, backoff);
      assert.deepEqual(scanned?.backoff, backoff);
      assert.deepEqual(cleared, { ...beat("w1"), assignment: null }, "no backoff attribute left");
      await assert.rejects(
        store.heartbeat(beat("w1", { backoff: new Map([["orders:1", -1]]) })),
        /backoff\[orders:1\]/,
      );
    });

    it("worker reads a worker's own item with the assignment the leader wrote since its heartbeat; null for none", async () => {
      const { store } = await fixture(backend);
      assert.equal(await store.worker("w1"), null);
      await store.heartbeat(beat("w1"));
      assert.equal(await store.assign("w1", ["t:0", "t:1"]), true);

      assert.deepEqual(await store.worker("w1"), { ...beat("w1"), assignment: ["t:0", "t:1"] });
      await assert.rejects(store.worker(""), /workerId/);
    });

    it("assign writes only onto an existing worker item", async () => {
      const { store } = await fixture(backend);
      assert.equal(await store.assign("nobody", ["t:0"]), false);
      assert.deepEqual((await store.scan()).workers, []);
    });

    it("removeWorker deletes only the item as the leader saw it: a heartbeat since keeps it", async () => {
      const { store } = await fixture(backend);
      const seen = await store.heartbeat(beat("w1"));
      await store.heartbeat(beat("w1", { expiresAt: NOW + 30_000 }));
      assert.equal(await store.removeWorker(seen), false);
      const [now] = (await store.scan()).workers;
      assert.ok(now !== undefined);
      assert.equal(await store.removeWorker(now), true);
      assert.deepEqual((await store.scan()).workers, []);
    });

    it("of 10 workers taking the absent leader item at once exactly one wins; a stale view cannot renew", async () => {
      const { store } = await fixture(backend);
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => store.claimLeader(null, `w${i}`, NOW + 15_000)),
      );
      const winners = results.filter((r) => r !== null);
      assert.equal(winners.length, 1);
      const held = winners[0];
      assert.ok(held !== null && held !== undefined);
      assert.deepEqual(await store.leader(), held);

      const renewed = await store.claimLeader(held, held.owner ?? "", NOW + 30_000);
      assert.equal(renewed?.counter, held.counter + 1);
      assert.equal(await store.claimLeader(held, "late", NOW + 30_000), null, "the counter moved on");
    });

    it("a leader item without a counter reads as given up and can be taken over", async () => {
      const { store, raw } = await fixture(backend);
      assert.ok(await raw.put("#leader", { owner: "ghost", expiresAt: NOW }, { operation: "test" }));
      const observed = await store.leader();
      assert.deepEqual(observed, { owner: null, counter: -1, expiresAt: 0 });
      const taken = await store.claimLeader(observed, "w1", NOW + 15_000);
      assert.equal(taken?.owner, "w1");
      assert.deepEqual(await store.leader(), taken);
    });

    it("list, lease and scan keep leases and protocol items apart; a worker item that is not one is skipped and reported", async () => {
      const { store, raw, metrics } = await fixture(backend);
      await store.ensure([{ topic: "t", partition: 0 }]);
      await store.heartbeat(beat("w1"));
      await store.claimLeader(null, "w1", NOW + 15_000);
      // A worker item under another worker's key.
      assert.ok(await raw.put("#worker/bad", { workerId: "w1" }, { operation: "test" }));

      assert.deepEqual(
        (await store.list()).map((l) => `${l.topic}:${l.partition}`),
        ["t:0"],
      );
      assert.equal((await store.lease({ topic: "t", partition: 0 }))?.counter, 0);
      assert.equal(await store.lease({ topic: "t", partition: 1 }), null);
      const snapshot = await store.scan();
      assert.deepEqual(
        snapshot.workers.map((w) => w.workerId),
        ["w1"],
      );
      assert.equal(snapshot.leader?.owner, "w1");
      assert.equal(snapshot.leases.length, 1);
      assert.deepEqual(metrics.skipped, [{ leaseKey: "#worker/bad", attribute: "workerId" }]);
    });

    unreadableLeaseCases(backend);
  });
}

function unreadableLeaseCases(backend: ConformanceBackend): void {
  it("a lease item without a counter is skipped by list and scan, warned about once and counted each time, never overwritten", async () => {
    const { store, raw, logger, metrics } = await fixture(backend);
    await store.ensure([{ topic: "orders", partition: 0 }]);
    assert.ok(
      await raw.put("orders:1", { topic: "orders", partition: 1, expiresAt: 0 }, { operation: "test" }),
    );
    await store.ensure([{ topic: "orders", partition: 1 }]);

    assert.deepEqual(
      (await store.list()).map((l) => `${l.topic}:${l.partition}`),
      ["orders:0"],
    );
    assert.equal((await store.scan()).leases.length, 1);

    assert.deepEqual(metrics.skipped, [
      { leaseKey: "orders:1", attribute: "counter" },
      { leaseKey: "orders:1", attribute: "counter" },
    ]);
    const [warning, ...more] = logger.at("warn");
    assert.equal(more.length, 0);
    assert.deepEqual([warning?.fields.leaseKey, warning?.fields.attribute], ["orders:1", "counter"]);
    assert.equal(warning?.fields.tableName, raw.name);
    assert.equal((await raw.get("orders:1", { consistent: true }))?.counter, undefined, "left as it was");
  });

  it("an operation on a held lease whose item went bad still fails with LEASE_STORE_INVALID", async () => {
    const { store, raw } = await fixture(backend);
    const held = await claimed(store, await ensureOne(store, "t", 0), "A", Date.now() + MINUTE);
    assert.ok((await raw.update("t:0", new ChangeSet().without("topic"), { operation: "test" })).ok);

    await assert.rejects(store.renew(held, Date.now() + 2 * MINUTE), (error: unknown) => {
      assert.ok(isReplicatorError(error, "LEASE_STORE_INVALID"), String(error));
      assert.deepEqual(error.details, { leaseKey: "t:0", attribute: "topic" });
      return true;
    });
    assert.deepEqual(await store.list(), []);
  });
}
