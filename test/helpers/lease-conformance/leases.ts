/**
 * The lease items' writes: ensure, claim, renew, checkpoint, release, handoff, and what a
 * refused write says (every LEASE_LOST reason, with its details).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { heldBy, itemAbsent } from "../../../lib/core/lease/model.js";
import { TableLeaseStore } from "../../../lib/core/lease/store.js";
import type { Lease } from "../../../lib/core/ports.js";
import { isReplicatorError } from "../../../lib/errors.js";
import { leaseOf } from "../fake-leases.js";
import { assertCode, type ConformanceBackend, claimed, ensureOne, fixture, MINUTE } from "./backend.js";

export function leaseCases(backend: ConformanceBackend): void {
  describe("leases", () => {
    it("ensure creates free leases and list reads them back", async () => {
      const { store } = await fixture(backend);

      await store.ensure([
        { topic: "orders", partition: 0 },
        { topic: "orders", partition: 1 },
        { topic: "orders", partition: 1 },
      ]);
      const leases = await store.list();

      assert.deepEqual(
        leases.sort((a, b) => a.partition - b.partition),
        [0, 1].map((partition) => ({
          ...leaseOf({ topic: "orders", partition }),
          targetOffset: null,
          sourceTopicId: null,
          sourceEpoch: null,
        })),
      );
    });

    it("20 concurrent claims of one lease yield exactly one owner", async () => {
      const { store } = await fixture(backend);
      const free = await ensureOne(store);
      const expiresAt = Date.now() + MINUTE;

      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => store.claim(free, `worker-${i}`, expiresAt)),
      );

      const winners = results.filter((r): r is Lease => r !== null);
      assert.equal(winners.length, 1);
      const [stored] = await store.list();
      assert.equal(stored?.owner, winners[0]?.owner);
      assert.equal(stored?.counter, 1);
    });

    it("an expired lease is taken over and the old holder's renew and checkpoint are refused", async () => {
      const { store } = await fixture(backend);
      const free = await ensureOne(store);
      const now = Date.now();
      const heldByA = await claimed(store, free, "worker-a", now - 1);
      const [observed] = await store.list();
      assert.ok(observed && observed.expiresAt < Date.now());
      const heldByB = await claimed(store, observed, "worker-b", now + MINUTE);
      assert.equal(heldByB.counter, heldByA.counter + 1);

      await assert.rejects(store.renew(heldByA, now + MINUTE), assertCode("LEASE_LOST", "taken"));
      await assert.rejects(store.checkpoint(heldByA, 10, now), assertCode("LEASE_LOST", "taken"));

      const [stored] = await store.list();
      assert.equal(stored?.owner, "worker-b");
      assert.equal(stored?.expiresAt, now + MINUTE);
      assert.equal(stored?.checkpoint, null);
    });

    it("late renewal: a renewal that lands after another worker saw the lease expired makes its claim fail", async () => {
      const { store } = await fixture(backend);
      const now = Date.now();
      const heldByA = await claimed(store, await ensureOne(store), "worker-a", now - 1);
      const [seenByB] = await store.list();
      assert.ok(seenByB && seenByB.owner === "worker-a" && seenByB.expiresAt <= Date.now());

      // A's late renewal lands, then B's claim, decided on what B saw before it.
      const renewedByA = await store.renew(heldByA, now + MINUTE);
      const claimedByB = await store.claim(seenByB, "worker-b", now + MINUTE);

      // One holder. A, told its renewal landed, may go on writing; B must not start.
      assert.equal(claimedByB, null);
      const [stored] = await store.list();
      assert.deepEqual([stored?.owner, stored?.counter], ["worker-a", heldByA.counter]);
      assert.equal(stored?.expiresAt, now + MINUTE);
      assert.equal((await store.checkpoint(renewedByA, 10, Date.now())).checkpoint, 10);
    });

    it("a stale holder's checkpoint is refused after its unexpired lease was stolen", async () => {
      const { store } = await fixture(backend);
      const now = Date.now();
      const heldByA = await claimed(store, await ensureOne(store), "worker-a", now + MINUTE);
      const heldByB = await claimed(store, heldByA, "worker-b", now + MINUTE);
      await store.checkpoint(heldByB, 50, now);

      await assert.rejects(store.checkpoint(heldByA, 80, now), assertCode("LEASE_LOST", "taken"));

      assert.equal((await store.list())[0]?.checkpoint, 50);
    });

    it("a lease that was lost and won back by the same worker id fences the old claim", async () => {
      const { store } = await fixture(backend);
      const now = Date.now();
      const first = await claimed(store, await ensureOne(store), "worker-a", now + MINUTE);
      const stolen = await claimed(store, first, "worker-b", now + MINUTE);
      const wonBack = await claimed(store, stolen, "worker-a", now + MINUTE);

      await assert.rejects(store.checkpoint(first, 10, now), assertCode("LEASE_LOST", "taken"));
      await assert.rejects(store.renew(first, now + 2 * MINUTE), assertCode("LEASE_LOST", "taken"));
      assert.equal(await store.release(first), false);
      // A third worker that saw the first claim must not take the lease from its current holder.
      assert.equal(await store.claim(first, "worker-c", now + MINUTE), null);

      assert.deepEqual(await store.list(), [wonBack]);
    });

    it("a checkpoint after expiry is refused even when nobody took the lease", async () => {
      const { store } = await fixture(backend);
      const expiresAt = Date.now() + MINUTE;
      const held = await claimed(store, await ensureOne(store), "worker-a", expiresAt);
      await store.checkpoint(held, 5, expiresAt - 1);

      await assert.rejects(store.checkpoint(held, 10, expiresAt), assertCode("LEASE_LOST", "expired"));

      const [stored] = await store.list();
      assert.deepEqual([stored?.owner, stored?.checkpoint], ["worker-a", 5]);
    });

    it("renew extends a held lease, and checkpoints succeed until the new expiry", async () => {
      const { store } = await fixture(backend);
      const now = Date.now();
      const held = await claimed(store, await ensureOne(store), "worker-a", now + 1_000);

      const renewed = await store.renew(held, now + MINUTE);
      const advanced = await store.checkpoint(renewed, 7, now + 2_000);

      assert.deepEqual([renewed.expiresAt, renewed.counter], [now + MINUTE, held.counter]);
      assert.equal(advanced.checkpoint, 7);
    });

    it("release frees the lease, a claim right after succeeds, and a second release returns false", async () => {
      const { store } = await fixture(backend);
      const now = Date.now();
      const held = await claimed(store, await ensureOne(store), "worker-a", now + MINUTE);
      await store.checkpoint(held, 30, now);

      assert.equal(await store.release(held), true);
      const [released] = await store.list();
      assert.ok(released);
      assert.deepEqual([released.owner, released.expiresAt, released.checkpoint], [null, 0, 30]);
      const next = await claimed(store, released, "worker-b", now + MINUTE);

      assert.deepEqual([next.counter, next.checkpoint], [held.counter + 1, 30]);
      assert.equal(await store.release(held), false);
      await assert.rejects(store.renew(held, now + MINUTE), assertCode("LEASE_LOST", "taken"));
    });

    it("a stale holder cannot release a lease another worker holds", async () => {
      const { store } = await fixture(backend);
      const now = Date.now();
      const heldByA = await claimed(store, await ensureOne(store), "worker-a", now - 1);
      await claimed(store, heldByA, "worker-b", now + MINUTE);

      assert.equal(await store.release(heldByA), false);

      assert.equal((await store.list())[0]?.owner, "worker-b");
    });

    it("a handoff request is seen by the holder, and handOver passes the lease to the asker", async () => {
      const { store } = await fixture(backend);
      const now = Date.now();
      const held = await claimed(store, await ensureOne(store), "worker-a", now + MINUTE);

      // Asking does not move the lease; a second asker cannot overwrite the first request.
      assert.equal(await store.requestHandoff(held, "worker-b"), true);
      assert.equal(await store.requestHandoff(held, "worker-c"), false);
      const renewed = await store.renew(held, now + 2 * MINUTE);
      assert.deepEqual([renewed.owner, renewed.handoffTo], ["worker-a", "worker-b"]);
      const checkpointed = await store.checkpoint(renewed, 42, Date.now());

      assert.equal(await store.handOver(checkpointed, now + 3 * MINUTE), true);

      // B holds it with A's checkpoint and a fresh expiry; A is fenced by the new counter.
      const [after] = await store.list();
      assert.deepEqual(
        [after?.owner, after?.counter, after?.checkpoint, after?.expiresAt, after?.handoffTo],
        ["worker-b", held.counter + 1, 42, now + 3 * MINUTE, null],
      );
      await assert.rejects(store.checkpoint(checkpointed, 50, Date.now()), assertCode("LEASE_LOST"));
      assert.equal(await store.handOver(checkpointed, now + 3 * MINUTE), false);
    });

    it("a withdrawn request makes a later handover fail, and a withdrawal after the handover fails", async () => {
      const { store } = await fixture(backend);
      const now = Date.now();
      const held = await claimed(store, await ensureOne(store), "worker-a", now + MINUTE);
      assert.equal(await store.requestHandoff(held, "worker-b"), true);
      const asked = await store.renew(held, now + 2 * MINUTE);

      // Only the asker's own request is withdrawn; then A's handover (its view still shows the
      // request) is refused, and the lease stays A's, to release.
      assert.equal(await store.withdrawHandoff(asked, "worker-c"), false);
      assert.equal(await store.withdrawHandoff(asked, "worker-b"), true);
      assert.equal((await store.list())[0]?.handoffTo, null);
      assert.equal(await store.handOver(asked, now + 3 * MINUTE), false);
      assert.equal((await store.list())[0]?.owner, "worker-a");

      // Asked again and handed over first: the withdrawal is refused, and B holds the lease.
      const again = await store.renew(asked, now + 2 * MINUTE);
      assert.equal(await store.requestHandoff(again, "worker-b"), true);
      const askedAgain = { ...again, handoffTo: "worker-b" };
      assert.equal(await store.handOver(askedAgain, now + 3 * MINUTE), true);
      assert.equal(await store.withdrawHandoff(askedAgain, "worker-b"), false);
      assert.equal((await store.list())[0]?.owner, "worker-b");
    });

    it("a handoff request lands only on the holding it was made against", async () => {
      const { store } = await fixture(backend);
      const now = Date.now();
      const first = await claimed(store, await ensureOne(store), "worker-a", now + MINUTE);
      assert.equal(await store.release(first), true);
      const [free] = await store.list();
      assert.ok(free);
      await claimed(store, free, "worker-c", now + MINUTE);

      // B judged A overloaded from a stale view; C's holding must not be asked to give up.
      assert.equal(await store.requestHandoff(first, "worker-b"), false);
      assert.equal((await store.list())[0]?.handoffTo, null);
    });

    it("a claim based on a stale view returns null and changes nothing", async () => {
      const { store } = await fixture(backend);
      const free = await ensureOne(store);
      await claimed(store, free, "worker-a", Date.now() + MINUTE);

      assert.equal(await store.claim(free, "worker-b", Date.now() + MINUTE), null);

      const [stored] = await store.list();
      assert.deepEqual([stored?.owner, stored?.counter], ["worker-a", 1]);
    });

    it("a claim of a lease that does not exist returns null and does not create it", async () => {
      const { store } = await fixture(backend);

      assert.equal(
        await store.claim(leaseOf({ topic: "ghost", partition: 3 }), "worker-a", Date.now()),
        null,
      );
      assert.deepEqual(await store.list(), []);
    });

    ensureCases(backend);
    checkpointCases(backend);
    lossCases(backend);
  });
}

function ensureCases(backend: ConformanceBackend): void {
  it("ensure is idempotent under concurrency and never resets a held lease or its checkpoint", async () => {
    const f = await fixture(backend);
    const now = Date.now();
    const held = await claimed(f.store, await ensureOne(f.store), "worker-a", now + MINUTE);
    const progressed = await f.store.checkpoint(held, 42, now);
    const partitions = Array.from({ length: 8 }, (_, partition) => ({ topic: "orders", partition }));

    // Many cold-starting workers run ensure with the same list at once.
    await Promise.all(Array.from({ length: 10 }, () => f.another().ensure(partitions)));

    const leases = await f.store.list();
    assert.equal(leases.length, 8);
    assert.deepEqual(
      leases.find((l) => l.partition === 0),
      progressed,
    );
    assert.ok(leases.filter((l) => l.partition !== 0).every((l) => l.owner === null && l.counter === 0));
  });

  it("ensure does not reset a lease claimed between its existence check and its put", async () => {
    const f = await fixture(backend);
    const tp = { topic: "orders", partition: 0 };
    const now = Date.now();
    // Worker B's ensure pauses after its read found nothing; meanwhile worker A creates, claims
    // and checkpoints the lease.
    let progressed: Lease | undefined;
    const a = f.another();
    const ensureOnce = async () => {
      if (progressed !== undefined) return;
      await a.ensure([tp]);
      const [free] = await a.list();
      assert.ok(free);
      progressed = await a.checkpoint(await claimed(a, free, "worker-a", now + MINUTE), 42, now);
    };
    const hooked = {
      ...f.table,
      put: async (...args: Parameters<typeof f.table.put>) => {
        await ensureOnce();
        return f.table.put(...args);
      },
    };

    await new TableLeaseStore({ table: hooked }).ensure([tp]);

    assert.ok(progressed, "worker A ran inside B's ensure");
    assert.deepEqual(await f.store.list(), [progressed]);
  });

  it("list reads every page of the table", async () => {
    const { store } = await fixture(backend);
    const partitions = Array.from({ length: 30 }, (_, partition) => ({ topic: "big", partition }));
    await store.ensure(partitions);

    const leases = await store.list();

    assert.deepEqual(
      leases.map((l) => l.partition).sort((a, b) => a - b),
      partitions.map((p) => p.partition),
    );
  });

  it("ensure's put is conditional: a lease item already there is left as it is", async () => {
    const f = await fixture(backend);
    const held = await claimed(f.store, await ensureOne(f.store), "worker-a", Date.now() + MINUTE);

    const written = await f.table.put(
      "orders:0",
      { topic: "orders", partition: 0, counter: 0, expiresAt: 0 },
      { operation: "ensure", condition: itemAbsent },
    );

    assert.equal(written, false);
    assert.deepEqual(await f.store.list(), [held]);
  });
}

function checkpointCases(backend: ConformanceBackend): void {
  it("checkpoint never goes backwards, and repeating the stored checkpoint is harmless", async () => {
    const { store } = await fixture(backend);
    const t0 = Date.now();
    const claimedLease = await claimed(store, await ensureOne(store), "worker-a", t0 + MINUTE);
    const at100 = await store.checkpoint(claimedLease, 100, t0 + 1);

    // With an up-to-date view the regression is caught before any write.
    await assert.rejects(store.checkpoint(at100, 50, t0 + 2), assertCode("LEASE_LOST", "checkpoint-ahead"));
    // With a stale view (checkpoint still null) the table's condition catches it.
    await assert.rejects(
      store.checkpoint(claimedLease, 50, t0 + 3),
      assertCode("LEASE_LOST", "checkpoint-ahead"),
    );
    // A retried write of the checkpoint that already landed succeeds without counting as progress.
    const repeated = await store.checkpoint(claimedLease, 100, t0 + 4);
    const same = await store.checkpoint(at100, 100, t0 + 5);

    assert.deepEqual([repeated.checkpoint, same.checkpoint], [100, 100]);
    const [stored] = await store.list();
    assert.deepEqual([stored?.checkpoint, stored?.lastProgressAt], [100, t0 + 1]);
  });

  it("stores the target position with its checkpoint, also on a checkpoint that stays put, and only for the holder", async () => {
    const { store } = await fixture(backend);
    const t0 = Date.now();
    const held = await claimed(store, await ensureOne(store), "worker-a", t0 + MINUTE);

    const pinned = await store.checkpoint(held, 10, t0 + 1, 700);
    const plain = await store.checkpoint(pinned, 20, t0 + 2);
    const repositioned = await store.checkpoint(plain, 20, t0 + 3, 750);
    const stolen = await claimed(store, repositioned, "worker-b", t0 + MINUTE);
    await assert.rejects(store.checkpoint(repositioned, 30, t0 + 4, 900), assertCode("LEASE_LOST", "taken"));

    assert.equal(pinned.targetOffset, 700);
    assert.equal(plain.targetOffset, 700, "a checkpoint without a position keeps the stored one");
    assert.deepEqual([repositioned.checkpoint, repositioned.targetOffset], [20, 750]);
    const [stored] = await store.list();
    assert.deepEqual([stored?.owner, stored?.checkpoint, stored?.targetOffset], [stolen.owner, 20, 750]);
  });

  it("lastProgressAt moves only when the checkpoint advances", async () => {
    const { store } = await fixture(backend);
    const t0 = Date.now();
    const held = await claimed(store, await ensureOne(store), "worker-a", t0 + MINUTE);

    const first = await store.checkpoint(held, 10, t0 + 1);
    const unchanged = await store.checkpoint(first, 10, t0 + 2);
    const advanced = await store.checkpoint(unchanged, 11, t0 + 3);

    assert.deepEqual(
      [first.lastProgressAt, unchanged.lastProgressAt, advanced.lastProgressAt],
      [t0 + 1, t0 + 1, t0 + 3],
    );
  });
}

/** Each reason a write on a held lease is refused for, told apart by the item as it is now. */
function lossCases(backend: ConformanceBackend): void {
  it("every LEASE_LOST reason, with the holding it was refused for and the item as it is now", async () => {
    const f = await fixture(backend);
    const now = Date.now();
    const tps = [0, 1, 2, 3].map((partition) => ({ topic: "orders", partition }));
    await f.store.ensure(tps);
    const [free0, free1, free2, free3] = (await f.store.list()).sort((a, b) => a.partition - b.partition);
    assert.ok(free0 && free1 && free2 && free3);
    const held = await claimed(f.store, free0, "worker-a", now + MINUTE);
    const expired = await claimed(f.store, free1, "worker-a", now + 1_000);
    const released = await claimed(f.store, free2, "worker-a", now + MINUTE);
    const missing = await claimed(f.store, free3, "worker-a", now + MINUTE);
    await claimed(f.store, held, "worker-b", now + MINUTE);
    await f.store.release(released);
    // Someone deleted the item under the holder (a hand edit, a table emptied by mistake).
    assert.ok(
      await f.raw.delete("orders:3", {
        operation: "test",
        condition: heldBy({ owner: "worker-a", counter: 1 }),
      }),
    );

    const reasons = new Map<string, unknown>();
    for (const [name, write] of [
      ["taken", () => f.store.checkpoint(held, 10, now)],
      ["expired", () => f.store.checkpoint(expired, 10, now + 1_000)],
      ["released", () => f.store.renew(released, now + MINUTE)],
      ["missing", () => f.store.renew(missing, now + MINUTE)],
    ] as const) {
      await assert.rejects(write(), (error: unknown) => {
        assert.ok(isReplicatorError(error, "LEASE_LOST"), String(error));
        reasons.set(name, error.details);
        return true;
      });
    }

    assert.deepEqual(reasons.get("taken"), {
      topic: "orders",
      partition: 0,
      owner: "worker-a",
      counter: 1,
      reason: "taken",
      nextOffset: 10,
      currentOwner: "worker-b",
      currentCounter: 2,
      currentExpiresAt: now + MINUTE,
      currentCheckpoint: null,
    });
    assert.equal((reasons.get("expired") as { reason: string }).reason, "expired");
    assert.deepEqual(
      [reasons.get("released"), reasons.get("missing")].map((d) => (d as { reason: string }).reason),
      ["released", "missing"],
    );
    assert.equal((reasons.get("missing") as { currentOwner?: unknown }).currentOwner, undefined);
  });
}
