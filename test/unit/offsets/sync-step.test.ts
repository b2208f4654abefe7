/** runGroupSync, the lag function's step: a failure of the whole step is counted, never thrown. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ReplicatorError } from "../../../lib/errors.js";
import { createGroupSelector } from "../../../lib/offsets/group-selection.js";
import { runGroupSync } from "../../../lib/offsets/sync-step.js";
import { FakeGroupAdmin } from "../../helpers/fake-groups.js";
import { CapturingLogger, FakeClock, fakeMapping, InMemoryCluster } from "../../helpers/fakes.js";

describe("runGroupSync", () => {
  it("counts an unreachable group list as one failure and logs it", async () => {
    const clock = new FakeClock();
    const cluster = new InMemoryCluster(clock);
    const sourceGroups = new FakeGroupAdmin();
    sourceGroups.failNext(
      "listGroups",
      new ReplicatorError("GROUP_ADMIN_FAILED", "no coordinator", { retryable: false }),
    );
    const logger = new CapturingLogger();
    const step = {
      sourceGroups,
      targetGroups: new FakeGroupAdmin(),
      targetReader: cluster,
      targetAdmin: cluster,
      selector: createGroupSelector({ whitelist: ".*" }),
      header: Buffer.from("kafka-mirror.provenance"),
      sourceAlias: "A",
    };
    const retry = { clock, deadline: () => clock.now() };

    const report = await runGroupSync(step, {
      sourceAdmin: cluster,
      leases: { list: async () => [] },
      mapping: fakeMapping(),
      logger,
      retry,
    });

    assert.deepEqual(report, { groups: [], synced: 0, failed: 1, active: 0, maxNotCopied: 0 });
    assert.ok(logger.entries.some((e) => e.level === "error" && e.message === "group offset sync failed"));
  });
});
