/**
 * The worker's side of the lease protocol (lib/core/run/lease-coordinator.ts) with the real leader
 * turn, over the in-memory store that evaluates DynamoDB's conditions: claims, handoffs,
 * failover, and a fleet settling and staying put.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Lease, LeaseStore, WorkerRecord } from "../../../../lib/core/ports.js";
import { HeldLease } from "../../../../lib/core/pump/held-lease.js";
import {
  ASSIGNMENT_POLL_MS,
  LeaseCoordinator,
  leaseExpiry,
} from "../../../../lib/core/run/lease-coordinator.js";
import { RunLeases } from "../../../../lib/core/run/run-leases.js";
import { FakeClock } from "../../../helpers/fake-clock.js";
import { freezingIn, storeWith } from "../../../helpers/fake-leases.js";
import { CapturingLogger } from "../../../helpers/fake-observability.js";
import { countByOwner as counts, LeaseFleet } from "../../../helpers/lease-fleet.js";
import { InMemoryLeaseStore } from "../../../helpers/memory-lease-store.js";

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

/** A live worker's heartbeat, without its expiry. */
const beatOf = (workerId: string) => ({
  workerId,
  slot: workerId,
  startedAt: NOW,
  draining: false,
  deadline: FAR,
});

/** The clock stays at NOW unless a test moves it: a round's own `now` is later, and counts. */
function coordinatorOn(
  store: LeaseStore,
  workerId = "me",
  maxClaimsPerRound = 1_000,
  clock: { now(): number } = { now: () => NOW },
): LeaseCoordinator {
  return new LeaseCoordinator({
    clock,
    store,
    workerId,
    slot: workerId,
    startedAt: NOW,
    durationMs: DURATION,
    renewIntervalMs: 1_000,
    rebalanceIntervalMs: 1_000,
    maxClaimsPerRound,
    drainLeadMs: 3_000,
  });
}

async function fleetOver(partitions: number, workers: string[]): Promise<LeaseFleet> {
  return LeaseFleet.over(new InMemoryLeaseStore(), partitions, workers, DURATION);
}

/**
 * t:0 (held by `holder`, unless null) with L leading, and our coordinator after its first round
 * (nothing assigned to it yet). `stale`, once set, is what reads of our own item return.
 */
async function firstRoundDone(holder: string | null) {
  const store = new InMemoryLeaseStore();
  const tp = { topic: "t", partition: 0 };
  await store.ensure([tp]);
  if (holder !== null) assert.ok(await store.claim(store.get(tp) as Lease, holder, NOW + DURATION));
  await store.claimLeader(null, "L", NOW + 60_000);
  const reads = { stale: null as WorkerRecord | null };
  const coordinator = coordinatorOn(
    storeWith(store, { worker: async (id) => reads.stale ?? store.worker(id) }),
  );
  const first = await coordinator.rebalance(NOW, FAR);
  assert.equal(first.decision.assigned, false);
  return { store, tp, coordinator, reads };
}

describe("leaseExpiry", () => {
  it("caps the expiry at the hard deadline", () => {
    assert.equal(leaseExpiry(NOW, DURATION, NOW + 3_000), NOW + 3_000);
    assert.equal(leaseExpiry(NOW, DURATION, FAR), NOW + DURATION);
  });
});

describe("LeaseCoordinator", () => {
  it("a lone worker leads, assigns itself everything and claims it with an expiry capped at the deadline", async () => {
    const store = new InMemoryLeaseStore();
    await store.ensure([{ topic: "t", partition: 0 }]);
    const { acquired, decision } = await coordinatorOn(store).rebalance(NOW, NOW + 2_500);

    assert.equal(decision.leader, true);
    assert.equal(acquired.length, 1);
    assert.equal(acquired[0]?.expiresAt, NOW + 2_500);
    assert.equal(store.get({ topic: "t", partition: 0 })?.owner, "me");
    assert.deepEqual(store.workers()[0]?.assignment, ["t:0"]);
  });

  it("passes on at once a lease handed to it that another worker asked for before it began pumping it", async () => {
    // Prepare: H holds t:0; our leader turn asks H for it. H hands it to us, and X (the leader's
    // next wish) asks us for it before our poll has seen it ours: no pump of ours will ever see
    // that request, so the lease would sit with us, idle, until its fresh expiry.
    const store = new InMemoryLeaseStore();
    const tp = { topic: "t", partition: 0 };
    await store.ensure([tp]);
    assert.ok(await store.claim(store.get(tp) as Lease, "H", NOW + DURATION));
    const coordinator = coordinatorOn(store);
    const round = await coordinator.rebalance(NOW, FAR);
    assert.equal(store.get(tp)?.handoffTo, "me");
    assert.equal(round.acquired.length, 0);
    assert.ok(await store.handOver(store.get(tp) as Lease, NOW + 200 + DURATION));
    const beatOfX = { workerId: "X", slot: "X", startedAt: NOW, draining: false, deadline: FAR };
    await store.heartbeat({ ...beatOfX, expiresAt: NOW + DURATION });
    assert.ok(await store.requestHandoff(store.get(tp) as Lease, "X"));

    // Act
    const { acquired } = await coordinator.poll(NOW + 300, FAR);

    // Assess
    assert.deepEqual(acquired, []);
    assert.equal(store.get(tp)?.owner, "X", "the lease stayed with us, nobody copying it");
    assert.equal(coordinator.awaiting, false);
    assert.equal(coordinator.nextPollAt, NOW + ASSIGNMENT_POLL_MS, "only the assignment read is left");
  });

  it("publishes its backoff in its heartbeat and does not take a partition in it that a leader (stale) still assigns it", async () => {
    // Prepare: L leads and assigns t:0 (free) to us, not knowing yet that we failed it.
    const { store, tp, coordinator } = await firstRoundDone(null);
    assert.ok(await store.assign("me", ["t:0"]));
    const backoff = new Map([["t:0", NOW + 2_500]]);

    // Act: a round and a poll within the backoff, then a round after it
    const during = await coordinator.rebalance(NOW + 1_000, FAR, { backoff });
    const polled = await coordinator.poll(NOW + 2_000, FAR, { backoff });
    const mine = store.workers().find((w) => w.workerId === "me");
    const after = await coordinator.rebalance(NOW + 3_000, FAR, { backoff });

    // Assess
    assert.deepEqual([during.acquired, polled.acquired], [[], []]);
    assert.deepEqual(mine?.backoff, backoff);
    assert.deepEqual(
      after.acquired.map((l) => [l.partition, l.owner]),
      [[0, "me"]],
    );
    assert.equal(store.get(tp)?.owner, "me");
  });

  it("takes a partition the leader moved to it, handed over at the leader's request, within a poll and not at its next round (regression: idle up to a round)", async () => {
    // Prepare: H holds t:0, L leads. Our first round finds nothing assigned to us.
    const { store, tp, coordinator } = await firstRoundDone("H");
    // L's round moves t:0 to us and asks H for it; H stops and hands it over at once.
    assert.ok(await store.assign("me", ["t:0"]));
    assert.ok(await store.requestHandoff(store.get(tp) as Lease, "me"));
    assert.ok(await store.handOver(store.get(tp) as Lease, NOW + 500 + DURATION));
    assert.equal(coordinator.nextPollAt, NOW + ASSIGNMENT_POLL_MS);

    // Act: the poll a second after our round, long before the next round (rebalance interval).
    const { acquired } = await coordinator.poll(NOW + ASSIGNMENT_POLL_MS, FAR);

    // Assess
    assert.deepEqual(
      acquired.map((l) => [l.partition, l.owner]),
      [[0, "me"]],
    );
  });

  it("between rounds asks nobody for a partition newly assigned to it: that is the leader's (or its next round's) to ask", async () => {
    const { store, tp, coordinator } = await firstRoundDone("H");
    assert.ok(await store.assign("me", ["t:0"]));

    const { acquired, requested } = await coordinator.poll(NOW + ASSIGNMENT_POLL_MS, FAR);

    assert.deepEqual([acquired, requested], [[], []]);
    assert.equal(store.get(tp)?.handoffTo, null);
    assert.equal(store.calls.worker, 1);
    // Read once: the next poll reads our item again, but does not look at the same lease again.
    const leaseReads = store.calls.lease;
    await coordinator.poll(NOW + 2 * ASSIGNMENT_POLL_MS, FAR);
    assert.equal(store.calls.worker, 2);
    assert.equal(store.calls.lease, leaseReads);
    // The next round asks.
    const round = await coordinator.rebalance(NOW + 2.5 * ASSIGNMENT_POLL_MS, FAR);
    assert.equal(round.requested.length, 1);
  });

  it("does not ask back a partition the leader moved away, on a read of its item older than its last heartbeat", async () => {
    const { store, tp, coordinator, reads } = await firstRoundDone(null);
    // L assigned t:0 to us, then moved it to W2, which holds it now.
    assert.ok(await store.assign("me", ["t:0"]));
    const before = await store.worker("me");
    assert.ok(await store.claim(store.get(tp) as Lease, "W2", NOW + DURATION));
    assert.ok(await store.assign("me", []));
    await coordinator.rebalance(NOW + 500, FAR);

    // An eventually consistent read a second later still returns the item as it was before.
    reads.stale = before;
    const { requested } = await coordinator.poll(NOW + 500 + ASSIGNMENT_POLL_MS, FAR);

    assert.deepEqual(requested, [], "asked W2 to hand back a partition the leader had moved to it");
    assert.equal(store.get(tp)?.handoffTo, null);
  });

  it("ignores a read of its item older than its last heartbeat: a free partition it lists is not claimed", async () => {
    const { store, tp, coordinator, reads } = await firstRoundDone(null);
    assert.ok(await store.assign("me", ["t:0"]));
    const before = await store.worker("me");
    // The leader takes it back before our next heartbeat, which returns nothing assigned.
    assert.ok(await store.assign("me", []));
    await coordinator.rebalance(NOW + 500, FAR);

    reads.stale = before;
    const { acquired } = await coordinator.poll(NOW + 500 + ASSIGNMENT_POLL_MS, FAR);

    assert.deepEqual(acquired, [], "claimed on a stale read");
    assert.equal(store.get(tp)?.owner, null);
  });

  it("between rounds, takes nothing while draining or presumed dead, and reads nothing while draining", async () => {
    const { store, coordinator: dead } = await firstRoundDone(null);
    assert.ok(await store.assign("me", ["t:0"]));
    // The heartbeat lasts 3 s: at +4 s we come back from a freeze, the assignment stale.
    assert.deepEqual(await dead.poll(NOW + 4_000, FAR), { acquired: [], requested: [] });
    assert.equal(store.get({ topic: "t", partition: 0 })?.owner, null);

    const draining = coordinatorOn(store, "d");
    await draining.rebalance(NOW, FAR, { draining: true });
    assert.equal(draining.nextPollAt, null, "a draining run with nothing awaited may end");
    const reads = store.calls.worker;
    await draining.poll(NOW + 5_000, FAR, { draining: true });
    assert.equal(store.calls.worker, reads);
  });

  it("claims at most maxClaimsPerRound leases a round, and counts the rest as available", async () => {
    const store = new InMemoryLeaseStore();
    await store.ensure(Array.from({ length: 10 }, (_, p) => ({ topic: "t", partition: p })));
    const coordinator = coordinatorOn(store, "me", 4);

    const first = await coordinator.rebalance(NOW, FAR);
    assert.equal(first.acquired.length, 4);
    assert.ok(first.decision.available > 0, "a --once run is not done yet");
    assert.equal(store.calls.claim, 4);
  });

  it("treats a lost claim race as normal", async () => {
    const store = new InMemoryLeaseStore();
    await store.ensure([{ topic: "t", partition: 0 }]);
    const [observed] = await store.list();
    assert.ok(observed);
    // The read comes back free, but someone claims between our read and our claim.
    const racing = storeWith(store, {
      lease: async () => {
        await store.claim(observed, "other", NOW + DURATION);
        return observed;
      },
    });
    const { acquired } = await coordinatorOn(racing).rebalance(NOW, FAR);

    assert.deepEqual(acquired, []);
    assert.equal(store.get({ topic: "t", partition: 0 })?.owner, "other");
  });

  it("does not pump a lease it holds while another worker asked for it (a handover under way)", async () => {
    const store = new InMemoryLeaseStore();
    await store.ensure([
      { topic: "t", partition: 0 },
      { topic: "t", partition: 1 },
    ]);
    store.put({ ...lease(0, "me"), handoffTo: "other" });
    store.put(lease(1, "me"));

    const { acquired } = await coordinatorOn(store).rebalance(NOW, FAR);

    assert.deepEqual(
      acquired.map((l) => l.partition),
      [1],
    );
  });

  it("does not pump a lease assigned to it that another worker still holds: it asks for it", async () => {
    // The assignment is only a wish: a live lease of another holder (here one the leader counts
    // as gone, since it has no heartbeat) is asked for, never taken on.
    const store = new InMemoryLeaseStore();
    await store.ensure([{ topic: "t", partition: 0 }]);
    store.put(lease(0, "other"));

    const { acquired, requested } = await coordinatorOn(store).rebalance(NOW, FAR);

    assert.deepEqual(acquired, []);
    assert.deepEqual(
      requested.map((l) => l.owner),
      ["other"],
    );
    assert.equal(store.get({ topic: "t", partition: 0 })?.handoffTo, "me");
  });

  it("a worker presumed dead (its heartbeat expired) forgets its assignment instead of chasing it", async () => {
    const store = new InMemoryLeaseStore();
    await store.ensure([{ topic: "t", partition: 0 }]);
    const coordinator = coordinatorOn(store);
    await coordinator.rebalance(NOW, FAR);
    assert.deepEqual(store.workers()[0]?.assignment, ["t:0"]);
    // Another worker holds the lease now, and the leader is someone else, alive.
    store.put(lease(0, "other", NOW + 60_000));
    await store.claimLeader(await store.leader(), "other", NOW + 60_000);

    // The heartbeat lasts 3 s: at +4 s the worker comes back from a freeze.
    const late = await coordinator.rebalance(NOW + 4_000, FAR);

    assert.deepEqual(late.requested, [], "no handoff asked on a stale assignment");
    assert.equal(late.decision.assigned, false);
    assert.equal(store.get({ topic: "t", partition: 0 })?.handoffTo, null);
  });

  it("a round frozen after its heartbeat, woken past it, asks nothing of the worker that took over (regression: a woken worker pulled its partition back)", async () => {
    // Prepare: we lead and hold t:0. Our next round freezes right after its heartbeat, while
    // our heartbeat, lease and leader item expire, and B takes the lease and the leadership.
    const store = new InMemoryLeaseStore();
    const tp = { topic: "t", partition: 0 };
    await store.ensure([tp]);
    const clock = { t: NOW };
    const frozen = freezingIn(store, "claimLeader");
    const coordinator = coordinatorOn(frozen.store, "me", 1_000, { now: () => clock.t });
    await coordinator.rebalance(NOW, FAR);
    assert.equal(store.get(tp)?.owner, "me");
    frozen.arm(async () => {
      clock.t = NOW + DURATION + 2_000;
      await store.heartbeat({ ...beatOf("B"), expiresAt: clock.t + 3_000 });
      assert.ok(await store.claimLeader(await store.leader(), "B", clock.t + 3_000));
      assert.ok(await store.claim(store.get(tp) as Lease, "B", clock.t + DURATION));
    });

    // Act: the round began at NOW + 1 s; it goes on with that `now` once it wakes.
    const stale = await coordinator.rebalance(NOW + 1_000, FAR);
    const next = await coordinator.rebalance(clock.t + 100, FAR);

    // Assess
    assert.ok(frozen.froze, "the round froze");
    assert.deepEqual([...stale.acquired, ...stale.requested, ...next.acquired, ...next.requested], []);
    assert.equal(store.get(tp)?.owner, "B");
    assert.equal(store.get(tp)?.handoffTo, null, "B was asked to hand over to a worker it outlived");
  });

  it("a leader round frozen in its scan, woken past its leader item, assigns nothing and asks nobody (regression: it undid the next leader's work)", async () => {
    // Prepare: we lead and hold t:0 and t:1. Our next round takes its leader turn and freezes in
    // the scan, while B takes the leadership and both leases and assigns them to itself.
    const store = new InMemoryLeaseStore();
    const tps = [0, 1].map((partition) => ({ topic: "t", partition }));
    await store.ensure(tps);
    const clock = { t: NOW };
    const frozen = freezingIn(store, "scan");
    const coordinator = coordinatorOn(frozen.store, "me", 1_000, { now: () => clock.t });
    await coordinator.rebalance(NOW, FAR);
    frozen.arm(async () => {
      clock.t = NOW + DURATION + 2_000;
      await store.heartbeat({ ...beatOf("B"), expiresAt: clock.t + 3_000 });
      assert.ok(await store.claimLeader(await store.leader(), "B", clock.t + 3_000));
      for (const tp of tps) assert.ok(await store.claim(store.get(tp) as Lease, "B", clock.t + DURATION));
      assert.ok(await store.assign("B", ["t:0", "t:1"]));
    });

    // Act: the round began at NOW + 1 s, as our leader item's holder.
    const stale = await coordinator.rebalance(NOW + 1_000, FAR);

    // Assess: at NOW + 1 s we were live and B too, so a stale plan moves one partition to us.
    assert.ok(frozen.froze, "the round froze");
    assert.deepEqual([...stale.acquired, ...stale.requested], []);
    assert.deepEqual(store.workers().find((w) => w.workerId === "B")?.assignment, ["t:0", "t:1"]);
    assert.deepEqual(
      tps.map((tp) => [store.get(tp)?.owner, store.get(tp)?.handoffTo]),
      [
        ["B", null],
        ["B", null],
      ],
    );
  });

  it("a leader round asks no holder on behalf of a worker whose assignment write failed (regression: the lease was handed to a worker that would not pump it)", async () => {
    // Prepare: we lead and hold t:0 and t:1; B joins, and writes of B's assignment fail.
    const store = new InMemoryLeaseStore();
    await store.ensure([0, 1].map((partition) => ({ topic: "t", partition })));
    const failing = storeWith(store, {
      assign: async (id, keys) => {
        if (id === "B") throw new Error("throttled");
        return store.assign(id, keys);
      },
    });
    const coordinator = coordinatorOn(failing);
    await coordinator.rebalance(NOW, FAR);
    await store.heartbeat({ ...beatOf("B"), expiresAt: NOW + 3_000 });

    // Act: the round moves one partition to B.
    await coordinator.rebalance(NOW + 500, FAR);

    // Assess
    assert.equal(store.workers().find((w) => w.workerId === "B")?.assignment, null);
    assert.deepEqual(
      (await store.list()).map((l) => [l.owner, l.handoffTo]),
      [
        ["me", null],
        ["me", null],
      ],
    );
  });

  it("a leader round stops writing once it outlasts its leader item (regression: a throttled round overwrote the next leader's assignments)", async () => {
    // Prepare: we lead and hold t:0 and t:1; B joins. The round's first assignment write freezes
    // past our leader item and heartbeat, and meanwhile B takes the leadership.
    const store = new InMemoryLeaseStore();
    await store.ensure([0, 1].map((partition) => ({ topic: "t", partition })));
    const clock = { t: NOW };
    const frozen = freezingIn(store, "assign");
    const coordinator = coordinatorOn(frozen.store, "me", 1_000, { now: () => clock.t });
    await coordinator.rebalance(NOW, FAR);
    await store.heartbeat({ ...beatOf("B"), expiresAt: NOW + 60_000 });
    frozen.arm(async () => {
      clock.t = NOW + DURATION + 2_000;
      assert.ok(await store.claimLeader(await store.leader(), "B", clock.t + 3_000));
    });

    // Act
    await coordinator.rebalance(NOW + 500, FAR);

    // Assess: the frozen write landed late; the rest of the round (our own shrunk assignment,
    // the request to our own holding) was not written.
    assert.ok(frozen.froze, "the write froze");
    assert.deepEqual(store.workers().find((w) => w.workerId === "me")?.assignment, ["t:0", "t:1"]);
    assert.deepEqual(
      (await store.list()).map((l) => l.handoffTo),
      [null, null],
    );
  });

  it("a round whose now was read before a pause is presumed dead by the clock: it forgets its assignment", async () => {
    // Prepare: we held t:0; another worker holds it and leads now, our heartbeat (3 s) expired.
    const store = new InMemoryLeaseStore();
    const tp = { topic: "t", partition: 0 };
    await store.ensure([tp]);
    const clock = { t: NOW };
    const coordinator = coordinatorOn(store, "me", 1_000, { now: () => clock.t });
    await coordinator.rebalance(NOW, FAR);
    store.put(lease(0, "other", NOW + 60_000));
    await store.claimLeader(await store.leader(), "other", NOW + 60_000);
    clock.t = NOW + 3_500;

    // Act: the caller read its now (NOW + 1 s) before the pause.
    const late = await coordinator.rebalance(NOW + 1_000, FAR);

    // Assess
    assert.equal(late.decision.assigned, false, "the heartbeat kept a stale assignment");
    assert.deepEqual(late.requested, []);
    assert.equal(store.get(tp)?.handoffTo, null);
  });

  it("a heartbeat frozen in its write past the previous one acts on nothing it returned, and the next forgets it", async () => {
    // Prepare: we hold t:0 and lead; our heartbeat at NOW + 2 s freezes until NOW + 3.5 s, past
    // the previous one (NOW + 3 s), while another worker takes the lease and the leadership.
    const store = new InMemoryLeaseStore();
    const tp = { topic: "t", partition: 0 };
    await store.ensure([tp]);
    const clock = { t: NOW };
    const frozen = freezingIn(store, "heartbeat");
    const coordinator = coordinatorOn(frozen.store, "me", 1_000, { now: () => clock.t });
    await coordinator.rebalance(NOW, FAR);
    frozen.arm(async () => {
      clock.t = NOW + 3_500;
      store.put(lease(0, "other", NOW + 60_000));
      await store.claimLeader(await store.leader(), "other", NOW + 60_000);
    });

    // Act
    const frozenRound = await coordinator.rebalance(NOW + 2_000, FAR);
    const next = await coordinator.rebalance(clock.t + 100, FAR);

    // Assess
    assert.ok(frozen.froze, "the heartbeat froze");
    assert.deepEqual(frozenRound.requested, [], "asked on an assignment the leader may have moved");
    assert.equal(store.get(tp)?.handoffTo, null);
    assert.equal(next.decision.assigned, false);
  });

  it("a worker presumed dead withdraws the handoffs it asked for: the leader may have moved them since", async () => {
    // Prepare: H holds t:0, L leads and assigns it to us; our round asks H for it.
    const { store, tp, coordinator } = await firstRoundDone("H");
    assert.ok(await store.assign("me", ["t:0"]));
    await coordinator.rebalance(NOW + 1_000, FAR);
    assert.equal(store.get(tp)?.handoffTo, "me");

    // Act: back from a freeze longer than our heartbeat (3 s), before H handed it over.
    const late = await coordinator.rebalance(NOW + 5_000, FAR);

    // Assess
    assert.deepEqual([...late.acquired, ...late.requested], []);
    assert.equal(store.get(tp)?.owner, "H");
    assert.equal(store.get(tp)?.handoffTo, null);
    assert.equal(coordinator.awaiting, false);
  });

  it("a poll that finds the worker not alive looks at an awaited lease again 250 ms later, not at every poll", async () => {
    // Prepare: H holds t:0, L leads and assigns it to us; our round asks H for it; then the clock
    // passes our heartbeat (3 s from NOW + 1 s) while the caller's polls still run on stale time.
    const { store, tp } = await firstRoundDone("H");
    const clock = { t: NOW };
    let reads = 0;
    const counting = storeWith(store, {
      lease: async (key) => {
        reads++;
        return store.lease(key);
      },
    });
    const coordinator = coordinatorOn(counting, "me", 1_000, { now: () => clock.t });
    await coordinator.rebalance(NOW, FAR);
    assert.ok(await store.assign("me", ["t:0"]));
    await coordinator.rebalance(NOW + 1_000, FAR);
    assert.equal(store.get(tp)?.handoffTo, "me");
    clock.t = NOW + 4_500;

    // Act: polls 100 ms apart, the first one due.
    const readsAt: number[] = [];
    for (const at of [NOW + 1_500, NOW + 1_600, NOW + 1_700, NOW + 1_750]) {
      reads = 0;
      const polled = await coordinator.poll(at, FAR);
      assert.deepEqual([...polled.acquired, ...polled.requested], []);
      readsAt.push(reads);
    }

    // Assess
    assert.deepEqual(readsAt, [1, 0, 0, 1]);
    assert.equal(store.get(tp)?.owner, "H");
  });

  it("a poll that finds the worker not alive gives back a lease handed to it meanwhile (regression: it idled until the next heartbeat)", async () => {
    // Prepare: H holds t:0, L leads and assigns it to us; our round asks H; H hands it over;
    // then the clock passes our heartbeat (3 s from NOW + 1 s).
    const { store, tp } = await firstRoundDone("H");
    const clock = { t: NOW };
    const coordinator = coordinatorOn(store, "me", 1_000, { now: () => clock.t });
    await coordinator.rebalance(NOW, FAR);
    assert.ok(await store.assign("me", ["t:0"]));
    await coordinator.rebalance(NOW + 1_000, FAR);
    assert.ok(await store.handOver(store.get(tp) as Lease, NOW + 1_200 + DURATION));
    assert.equal(store.get(tp)?.owner, "me");
    clock.t = NOW + 4_500;

    // Act
    const polled = await coordinator.poll(NOW + 1_500, FAR);

    // Assess: free for the leader to place, not held for a run that may not come back.
    assert.deepEqual([...polled.acquired, ...polled.requested], []);
    assert.equal(store.get(tp)?.owner, null);
    assert.equal(coordinator.awaiting, false);
  });

  it("a newcomer asks the holder, and takes the lease only once it is handed over", async () => {
    const fleet = await fleetOver(12, ["A"]);
    await fleet.round();
    assert.deepEqual(await fleet.counts(), [12]);

    fleet.join("N");
    await fleet.round(); // N's first heartbeat; A, the leader, sees it next round
    await fleet.round(); // A assigns N half; N asks for them
    const asked = (await fleet.store.list()).filter((l) => l.handoffTo === "N");
    assert.equal(asked.length, 6);
    assert.ok(
      asked.every((l) => l.owner === "A"),
      "asking is not taking",
    );
    await fleet.round(); // A hands over at its renewal; N picks them up
    await fleet.round();
    assert.deepEqual(await fleet.counts(), [6, 6]);
  });

  it("3 workers over 24 partitions settle at 8 each and then stop moving leases", async () => {
    const fleet = await fleetOver(24, ["A", "B", "C"]);

    for (let i = 0; i < 10; i++) await fleet.round();
    assert.deepEqual(await fleet.counts(), [8, 8, 8]);

    const claimsWhenBalanced = fleet.claims;
    for (let i = 0; i < 20; i++) await fleet.round();
    assert.deepEqual(await fleet.counts(), [8, 8, 8]);
    assert.equal(fleet.claims, claimsWhenBalanced, "a balanced fleet must not flap");
  });

  it("24 partitions over 5 workers settle at 5,5,5,5,4 without flapping", async () => {
    const fleet = await fleetOver(24, ["A", "B", "C", "D", "E"]);

    for (let i = 0; i < 10; i++) await fleet.round();
    const settled = await fleet.counts();
    assert.deepEqual([...settled].sort(), [4, 5, 5, 5, 5]);

    const claimsWhenBalanced = fleet.claims;
    for (let i = 0; i < 20; i++) await fleet.round();
    assert.deepEqual(await fleet.counts(), settled);
    assert.equal(fleet.claims, claimsWhenBalanced);
  });

  it("the partitions of a worker that stops renewing go to the others after expiry, not before", async () => {
    const fleet = await fleetOver(24, ["A", "B", "C"]);
    for (let i = 0; i < 10; i++) await fleet.round();
    assert.deepEqual(await fleet.counts(), [8, 8, 8]);

    fleet.dead.add("C");
    for (let i = 0; i < 5; i++) await fleet.round();
    const early = counts(await fleet.store.list(), fleet.now);
    assert.equal(early.get("C"), 8, "nobody takes a live lease");

    for (let i = 0; i < 8; i++) await fleet.round();
    const late = counts(await fleet.store.list(), fleet.now);
    assert.equal(late.get("C"), undefined);
    assert.deepEqual([late.get("A"), late.get("B")], [12, 12]);
  });

  it("when the leader dies another worker takes the leader item after it expires", async () => {
    const fleet = await fleetOver(24, ["A", "B", "C"]);
    for (let i = 0; i < 10; i++) await fleet.round();
    const leader = (await fleet.store.leader())?.owner;
    assert.ok(leader !== undefined && leader !== null);

    fleet.dead.add(leader);
    for (let i = 0; i < 16; i++) await fleet.round();
    const now = await fleet.store.leader();
    assert.notEqual(now?.owner, leader);
    assert.deepEqual(
      [...counts(await fleet.store.list(), fleet.now).values()].sort(),
      [12, 12],
      "the survivors share the dead leader's partitions",
    );
  });
});

describe("LeaseCoordinator.leave", () => {
  /** H holds t:0 and our leader turn asked H for it: the request stands when our run ends. */
  async function askedOfH() {
    const store = new InMemoryLeaseStore();
    const tp = { topic: "t", partition: 0 };
    await store.ensure([tp]);
    assert.ok(await store.claim(store.get(tp) as Lease, "H", NOW + DURATION));
    const coordinator = coordinatorOn(store);
    await coordinator.rebalance(NOW, FAR);
    assert.equal(store.get(tp)?.handoffTo, "me");
    assert.equal(coordinator.awaiting, true);
    return { store, tp, coordinator };
  }

  it("withdraws its request, so a holder that read its heartbeat before it left releases instead of handing over (regression: a lease handed to a run that ended sat idle until it expired)", async () => {
    // Prepare: H's pump saw the request and read our heartbeat while it was still live.
    const { store, tp, coordinator } = await askedOfH();
    const seenByH = store.get(tp) as Lease;
    const route = { source: tp, target: tp };
    const held = new HeldLease(seenByH, route, FAR);
    const liveRead = await store.worker("me");
    assert.ok(liveRead !== null && liveRead.expiresAt > NOW + 200);
    const holder = new RunLeases({
      store: storeWith(store, { worker: async () => liveRead }),
      clock: new FakeClock(NOW + 200),
      logger: new CapturingLogger(),
      durationMs: DURATION,
      writeSafetyMarginMs: 1_000,
    });

    // Act: our run ends, then H's handover lands.
    await coordinator.leave(NOW + 100);
    await holder.handOver(held);

    // Assess
    assert.equal(store.get(tp)?.owner, null, "the lease went to a run that has ended, or stayed with H");
    assert.equal(store.get(tp)?.handoffTo, null);
  });

  it("releases a lease handed to it after its last poll", async () => {
    const { store, tp, coordinator } = await askedOfH();
    assert.ok(await store.handOver(store.get(tp) as Lease, NOW + 200 + DURATION));
    assert.equal(store.get(tp)?.owner, "me");

    await coordinator.leave(NOW + 300);

    assert.equal(store.get(tp)?.owner, null);
  });

  it("withdraws a request the leader made on its behalf for a partition it never looked at", async () => {
    // Prepare: after our last round L assigned us t:1 and asked its holder H for it.
    const { store, coordinator } = await askedOfH();
    const t1 = { topic: "t", partition: 1 };
    await store.ensure([t1]);
    assert.ok(await store.claim(store.get(t1) as Lease, "H", NOW + DURATION));
    assert.ok(await store.assign("me", ["t:0", "t:1"]));
    assert.ok(await store.requestHandoff(store.get(t1) as Lease, "me"));

    // Act
    await coordinator.leave(NOW + 300);

    // Assess
    assert.deepEqual(
      [0, 1].map((partition) => store.get({ topic: "t", partition })?.handoffTo),
      [null, null],
    );
  });

  it("does not read the leases its run has just released", async () => {
    const store = new InMemoryLeaseStore();
    await store.ensure([{ topic: "t", partition: 0 }]);
    const coordinator = coordinatorOn(store);
    const { acquired } = await coordinator.rebalance(NOW, FAR);
    assert.ok(acquired[0] && (await store.release(acquired[0])));
    const reads = store.calls.lease;

    await coordinator.leave(NOW + 100, { released: new Set(["t:0"]) });

    assert.equal(store.calls.lease, reads);
  });
});

describe("LeaseCoordinator after a restart (formerSelf)", () => {
  const OLD = "cli-w0~old";
  const KEYS = ["t:0", "t:1", "t:2"];

  /** A former run of slot cli-w0 holds every lease and the leader item, its heartbeat still live. */
  async function heldByFormerRun(): Promise<InMemoryLeaseStore> {
    const store = new InMemoryLeaseStore();
    await store.ensure([0, 1, 2].map((partition) => ({ topic: "t", partition })));
    for (const l of await store.list()) assert.ok(await store.claim(l, OLD, NOW + DURATION));
    await store.claimLeader(null, OLD, NOW + 3_000);
    const beat = { workerId: OLD, slot: "cli-w0", startedAt: NOW - 60_000, draining: false };
    await store.heartbeat({ ...beat, deadline: FAR, expiresAt: NOW + 3_000 });
    assert.ok(await store.assign(OLD, KEYS));
    return store;
  }

  function restarted(store: LeaseStore, formerSelf?: (owner: string) => boolean): LeaseCoordinator {
    return new LeaseCoordinator({
      store,
      workerId: "cli-w0~new",
      slot: "cli-w0",
      startedAt: NOW,
      durationMs: DURATION,
      renewIntervalMs: 1_000,
      rebalanceIntervalMs: 1_000,
      maxClaimsPerRound: 1_000,
      drainLeadMs: 3_000,
      formerSelf,
      clock: { now: () => NOW },
    });
  }

  it("takes its former run's leader item and leases at once, bumping each counter", async () => {
    const store = await heldByFormerRun();
    const before = await store.list();

    const { acquired, decision } = await restarted(store, (owner) => owner === OLD).rebalance(NOW + 1, FAR);

    assert.equal(decision.leader, true);
    assert.deepEqual(acquired.map((l) => [l.partition, l.owner, l.counter]).sort(), [
      [0, "cli-w0~new", 2],
      [1, "cli-w0~new", 2],
      [2, "cli-w0~new", 2],
    ]);
    // The old run's writes are fenced: its checkpoint under counter 1 is refused.
    const old = before.find((l) => l.partition === 0) as Lease;
    await assert.rejects(store.checkpoint(old, 10, NOW + 2), { code: "LEASE_LOST" });
  });

  it("without it, waits: not the leader, nothing taken while the former run's items last", async () => {
    const store = await heldByFormerRun();

    const { acquired, decision } = await restarted(store).rebalance(NOW + 1, FAR);

    assert.equal(decision.leader, false);
    assert.deepEqual(acquired, []);
    assert.deepEqual(
      (await store.list()).map((l) => l.owner),
      [OLD, OLD, OLD],
    );
  });

  it("never takes a lease of another worker before it expires, and lists it as overdue once a live holder would have handed it over", async () => {
    const store = new InMemoryLeaseStore();
    const tp = { topic: "t", partition: 0 };
    await store.ensure([tp]);
    assert.ok(await store.claim(store.get(tp) as Lease, "w-3", NOW + DURATION));
    const coordinator = restarted(store, (owner) => owner === OLD);

    const round = await coordinator.rebalance(NOW, FAR);
    assert.deepEqual(round.acquired, []);
    assert.equal(round.requested.length, 1, "asked w-3 to hand it over");
    assert.deepEqual(coordinator.overdue(NOW + 1), [], "a live holder hands over at its next renewal");

    const later = NOW + 2_000;
    assert.deepEqual(await coordinator.poll(later, FAR), { acquired: [], requested: [] });
    assert.deepEqual(coordinator.overdue(later), [{ key: "t:0", owner: "w-3", expiresAt: NOW + DURATION }]);
  });
});
