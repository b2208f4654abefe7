import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { mayGroupSync } from "../../../lib/cli/run-group-sync.js";

const NOW = 1_000_000;
const lease = (owner: string | null, expiresAt = NOW + 10_000) => ({ owner, counter: 3, expiresAt });

describe("mayGroupSync: one syncing process per lease table", () => {
  it("syncs in the process whose round holds the live leader item, and only there", () => {
    assert.equal(mayGroupSync(lease("host-1-abc.4"), "host-1-abc", NOW, false), true);
    assert.equal(mayGroupSync(lease("host-1-abc"), "host-1-abc", NOW, false), true, "run --once's worker");
    assert.equal(mayGroupSync(lease("host-2-def.1"), "host-1-abc", NOW, false), false);
    assert.equal(mayGroupSync(lease("host-2-def.1"), "host-1-abc", NOW, true), false, "not even at the end");
    assert.equal(
      mayGroupSync(lease("host-1-abcd.1"), "host-1-abc", NOW, false),
      false,
      "a longer id is another slot",
    );
  });

  it("with no live leader, waits for one in the minute's sync but syncs at the end of run --once", () => {
    for (const leader of [null, lease(null), lease("host-2-def.1", NOW), lease("host-1-abc.2", 0)]) {
      assert.equal(mayGroupSync(leader, "host-1-abc", NOW, false), false, JSON.stringify(leader));
      assert.equal(mayGroupSync(leader, "host-1-abc", NOW, true), true, JSON.stringify(leader));
    }
  });
});
