/**
 * The leader item's renewal (lib/core/run/lease-leader.ts): a renewal whose answer is lost (a timeout
 * after it landed) must not lock the leader out of its own item until it expires, leaving the
 * fleet without assignments for a heartbeat's life.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LeaderRole } from "../../../../lib/core/run/lease-leader.js";
import { ReplicatorError } from "../../../../lib/errors.js";
import { storeWith } from "../../../helpers/fake-leases.js";
import { InMemoryLeaseStore } from "../../../helpers/memory-lease-store.js";

const NOW = 1_000_000;
const TTL = 15_000;

describe("LeaderRole", () => {
  it("goes on leading after a renewal that landed but whose answer was lost", async () => {
    const store = new InMemoryLeaseStore();
    let loseAnswer = false;
    const flaky = storeWith(store, {
      claimLeader: async (observed, owner, expiresAt) => {
        const taken = await store.claimLeader(observed, owner, expiresAt);
        if (!loseAnswer) return taken;
        loseAnswer = false;
        throw new ReplicatorError("LEASE_STORE_UNAVAILABLE", "request timed out", { retryable: true });
      },
    });
    const role = new LeaderRole({
      store: flaky,
      workerId: "L",
      ttlMs: TTL,
      maxChangesPerRound: 10,
      drainLeadMs: 0,
      clock: { now: () => NOW },
    });

    assert.equal(await role.step(NOW), true);
    loseAnswer = true;
    await assert.rejects(role.step(NOW + 5_000));
    assert.equal((await store.leader())?.owner, "L", "the renewal landed");

    // The next round, well before the item expires: still the leader.
    assert.equal(await role.step(NOW + 10_000), true);
    assert.equal((await store.leader())?.expiresAt, NOW + 10_000 + TTL);
  });
});
