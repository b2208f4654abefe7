/** hasLiveMembers: the one rule for a group in use, whichever protocol described it. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { hasLiveMembers } from "../../../lib/offsets/group-liveness.js";

describe("hasLiveMembers", () => {
  it("is false only for a memberless group that is Empty or Dead (unknown)", () => {
    assert.equal(hasLiveMembers({ state: "Empty", members: 0 }), false);
    assert.equal(hasLiveMembers({ state: "Dead", members: 0 }), false);
  });

  it("is true with members, whatever the state says", () => {
    assert.equal(hasLiveMembers({ state: "Stable", members: 2 }), true);
    assert.equal(hasLiveMembers({ state: "Empty", members: 1 }), true);
  });

  it("is true for a state only a group with members is in, classic or KIP-848, or one it does not know", () => {
    for (const state of [
      "PreparingRebalance",
      "CompletingRebalance",
      "Assigning",
      "Reconciling",
      "Stable",
      "NotYetNamed",
    ]) {
      assert.equal(hasLiveMembers({ state, members: 0 }), true, state);
    }
  });
});
