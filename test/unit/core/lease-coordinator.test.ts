import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { decideClaims, LeaseCoordinator, leaseExpiry } from "../../../lib/core/lease-coordinator.js";
import { partitionKey } from "../../../lib/core/model.js";
import type { Lease } from "../../../lib/core/ports.js";
import { InMemoryLeaseStore, seededRandom, storeWith } from "../../helpers/fakes.js";
import { countByOwner as counts, LeaseFleet } from "../../helpers/lease-fleet.js";

const NOW = 1_000_000;
const DURATION = 10_000;
const FAR = Number.MAX_SAFE_INTEGER;

function lease(partition: number, owner: string | null, expiresAt = NOW + DURATION): Lease {
  return {
    topic: "t",
    partition,
    owner,
    counter: owner === null ? 0 : 1,
    expiresAt: owner === null ? 0 : expiresAt,
    checkpoint: null,
    lastProgressAt: null,
    handoffTo: null,
  };
}

/** `spec` maps owner to how many live leases it holds; then `free` free ones. */
function table(spec: Record<string, number>, free = 0): Lease[] {
  const leases: Lease[] = [];
  for (const [owner, n] of Object.entries(spec))
    for (let i = 0; i < n; i++) leases.push(lease(leases.length, owner));
  for (let i = 0; i < free; i++) leases.push(lease(leases.length, null));
  return leases;
}

async function fleetOver(partitions: number, workers: string[], seed = 7): Promise<LeaseFleet> {
  return LeaseFleet.over(new InMemoryLeaseStore(), partitions, workers, DURATION, seed);
}

describe("decideClaims", () => {
  it("takes free leases up to ceil(total / live workers), in random order", () => {
    // Prepare: A holds 2, 6 are free; with me that is 2 live workers, target 4.
    const leases = table({ A: 2 }, 6);

    // Act
    const first = decideClaims({ leases, me: "me", now: NOW, random: seededRandom(1) });
    const second = decideClaims({ leases, me: "me", now: NOW, random: seededRandom(2) });

    // Assess
    assert.equal(first.target, 4);
    assert.equal(first.liveWorkers, 2);
    assert.equal(first.take.length, 4);
    assert.ok(first.take.every((l) => l.owner === null));
    assert.equal(first.steal, null);
    assert.notDeepEqual(
      first.take.map((l) => l.partition),
      second.take.map((l) => l.partition),
      "two workers with different randomness should not race for the same leases in the same order",
    );
  });

  it("treats expired leases as free and does not count their owner as live", () => {
    const leases = [...table({ A: 3 }), lease(3, "dead", NOW - 1), lease(4, "dead", NOW)];

    const decision = decideClaims({ leases, me: "me", now: NOW, random: seededRandom(1) });

    assert.equal(decision.liveWorkers, 2);
    assert.equal(decision.target, 3);
    assert.deepEqual(decision.take.map((l) => l.partition).sort(), [3, 4]);
  });

  it("steals exactly one lease, from the most loaded worker, when nothing is free", () => {
    // 16 leases over A, B and me: target 6. A (10) is the only one above target.
    const leases = table({ A: 10, B: 6 });

    for (let seed = 1; seed <= 20; seed++) {
      const decision = decideClaims({ leases, me: "me", now: NOW, random: seededRandom(seed) });
      assert.equal(decision.take.length, 0);
      assert.equal(decision.steal?.owner, "A", `seed ${seed}`);
    }
  });

  it("counts a lease I asked for as awaited until it is handed over", () => {
    const [asked, ...rest] = table({ A: 10, B: 6 });
    assert.ok(asked);
    const leases = [{ ...asked, handoffTo: "me" }, ...rest];

    const decision = decideClaims({ leases, me: "me", now: NOW, random: seededRandom(3) });

    assert.equal(decision.awaiting, 1);
    assert.equal(
      decision.held,
      1,
      "the awaited lease counts toward my share, so I ask for no more than needed",
    );
    assert.equal(decideClaims({ leases: rest, me: "me", now: NOW }).awaiting, 0);
  });

  it("does not steal from a worker that holds only its fair share", () => {
    // 24 over 5 workers, settled at 5/5/5/5/4: the one with 4 must stay put.
    const leases = table({ A: 5, B: 5, C: 5, D: 5, me: 4 });

    const decision = decideClaims({ leases, me: "me", now: NOW });

    assert.equal(decision.target, 5);
    assert.equal(decision.steal, null);
    assert.equal(decision.take.length, 0);
  });

  it("prefers free leases over stealing", () => {
    const leases = table({ A: 10 }, 1);

    const decision = decideClaims({ leases, me: "me", now: NOW });

    assert.equal(decision.steal, null);
    assert.deepEqual(
      decision.take.map((l) => l.partition),
      [10],
    );
  });

  it("never takes excluded partitions", () => {
    const leases = table({}, 3);

    const decision = decideClaims({
      leases,
      me: "me",
      now: NOW,
      exclude: new Set([
        partitionKey({ topic: "t", partition: 0 }),
        partitionKey({ topic: "t", partition: 2 }),
      ]),
    });

    assert.deepEqual(
      decision.take.map((l) => l.partition),
      [1],
    );
    assert.equal(decision.available, 1);
  });
});

describe("leaseExpiry", () => {
  it("caps the expiry at the hard deadline", () => {
    assert.equal(leaseExpiry(NOW, DURATION, NOW + 3_000), NOW + 3_000);
    assert.equal(leaseExpiry(NOW, DURATION, FAR), NOW + DURATION);
  });
});

describe("LeaseCoordinator", () => {
  it("claims with an expiry that never exceeds the hard deadline", async () => {
    const store = new InMemoryLeaseStore();
    await store.ensure([{ topic: "t", partition: 0 }]);
    const coordinator = new LeaseCoordinator({ store, workerId: "me", durationMs: DURATION });

    const { acquired } = await coordinator.rebalance(NOW, NOW + 2_500);

    assert.equal(acquired.length, 1);
    assert.equal(acquired[0]?.expiresAt, NOW + 2_500);
    assert.equal(store.get({ topic: "t", partition: 0 })?.owner, "me");
  });

  it("treats a lost claim race as normal", async () => {
    const store = new InMemoryLeaseStore();
    await store.ensure([{ topic: "t", partition: 0 }]);
    const [observed] = await store.list();
    assert.ok(observed);
    await store.claim(observed, "other", NOW + DURATION);

    // The coordinator decided on a stale read: its claim loses and it must not throw.
    const coordinator = new LeaseCoordinator({
      store: storeWith(store, { list: async () => [observed] }),
      workerId: "me",
      durationMs: DURATION,
    });
    const { acquired } = await coordinator.rebalance(NOW, FAR);

    assert.deepEqual(acquired, []);
    assert.equal(store.get({ topic: "t", partition: 0 })?.owner, "other");
  });

  it("adopts a lease handed over to it, but not one of its own that another worker asked for", async () => {
    // A lease of mine with a handoff request is on its way out: my handover may not have landed
    // yet when I list the table, and a pump started on it would write alongside the taker's.
    const store = new InMemoryLeaseStore();
    store.put({ ...lease(0, "me"), handoffTo: "other" });
    store.put({ ...lease(1, "me"), handoffTo: "me" });
    store.put(lease(2, "me"));
    const coordinator = new LeaseCoordinator({ store, workerId: "me", durationMs: DURATION });

    const { acquired } = await coordinator.rebalance(NOW, FAR);

    assert.deepEqual(acquired.map((l) => l.partition).sort(), [1, 2]);
  });

  it("3 workers over 24 partitions settle at 8 each and then stop moving leases", async () => {
    const fleet = await fleetOver(24, ["A", "B", "C"]);

    for (let i = 0; i < 40; i++) await fleet.round();
    assert.deepEqual(await fleet.counts(), [8, 8, 8]);

    const claimsWhenBalanced = fleet.claims;
    for (let i = 0; i < 20; i++) await fleet.round();
    assert.deepEqual(await fleet.counts(), [8, 8, 8]);
    assert.equal(fleet.claims, claimsWhenBalanced, "a balanced fleet must not flap");
  });

  it("24 partitions over 5 workers settle at 5,5,5,5,4 without flapping", async () => {
    const fleet = await fleetOver(24, ["A", "B", "C", "D", "E"], 11);

    for (let i = 0; i < 60; i++) await fleet.round();
    const settled = await fleet.counts();
    assert.deepEqual([...settled].sort(), [4, 5, 5, 5, 5]);

    const claimsWhenBalanced = fleet.claims;
    for (let i = 0; i < 20; i++) await fleet.round();
    assert.deepEqual(await fleet.counts(), settled);
    assert.equal(fleet.claims, claimsWhenBalanced);
  });

  it("a newcomer asks for one lease per round and takes it only after the holder lets go", async () => {
    const fleet = await fleetOver(12, ["A"]);
    await fleet.round();
    assert.deepEqual(await fleet.counts(), [12]);

    const store = fleet.store;
    const newcomer = new LeaseCoordinator({ store, workerId: "N", durationMs: DURATION });
    const mine = new Set<string>();
    for (let round = 1; round <= 3; round++) {
      const { acquired, requested, decision } = await newcomer.rebalance(fleet.now, FAR, { exclude: mine });
      for (const l of acquired) mine.add(partitionKey(l));
      // Asking is not taking: the lease stays A's until A releases it.
      assert.equal(requested?.owner, "A");
      assert.equal(decision.steal?.owner, "A");
      assert.equal(acquired.length, round === 1 ? 0 : 1, `round ${round}`);
      const pending = (await store.list()).filter((l) => l.handoffTo === "N");
      assert.equal(pending.length, 1, "one request at a time");
      assert.equal(pending[0]?.owner, "A");
      // A renews, sees the request and releases (as the Worker does after its in-flight batch).
      await fleet.round();
    }
    const { acquired } = await newcomer.rebalance(fleet.now, FAR, { exclude: mine });
    assert.equal(acquired.length, 1);
    assert.equal(counts(await store.list(), fleet.now).get("N"), 3);
  });

  it("the partitions of a worker that stops renewing go to the others after expiry", async () => {
    const fleet = await fleetOver(24, ["A", "B", "C"], 3);
    for (let i = 0; i < 40; i++) await fleet.round();
    assert.deepEqual(await fleet.counts(), [8, 8, 8]);

    fleet.dead.add("C");
    // Before expiry nobody may take C's leases.
    await fleet.round();
    const early = counts(await fleet.store.list(), fleet.now);
    assert.equal(early.get("C"), 8);
    assert.equal((early.get("A") ?? 0) + (early.get("B") ?? 0), 16);

    for (let i = 0; i < 12; i++) await fleet.round();
    const late = counts(await fleet.store.list(), fleet.now);
    assert.equal(late.get("C"), undefined);
    assert.deepEqual([late.get("A"), late.get("B")], [12, 12]);
  });
});
