/**
 * runGroupSync, the lag function's step: a failure of the whole step is counted, never thrown;
 * a group whose commit is refused for good fails at the first attempt, the others go on; in
 * target.copy "batches" it translates by the source's batches.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { encodeProvenance } from "../../../lib/core/provenance.js";
import type { KafkaRetry } from "../../../lib/core/retry.js";
import { ReplicatorError } from "../../../lib/errors.js";
import { createGroupSelector } from "../../../lib/offsets/group-selection.js";
import { runGroupSync } from "../../../lib/offsets/sync-step.js";
import { FakeClock } from "../../helpers/fake-clock.js";
import { InMemoryCluster, makeRecords } from "../../helpers/fake-cluster.js";
import { FakeGroupAdmin } from "../../helpers/fake-groups.js";
import { leaseOf } from "../../helpers/fake-leases.js";
import { fakeMapping } from "../../helpers/fake-mapping.js";
import { CapturingLogger } from "../../helpers/fake-observability.js";

const HEADER = Buffer.from("kafka-mirror.provenance");

/**
 * Source `orders/0` (10 records) copied to `A.orders/0`, offset for offset; groups `billing` and
 * `audit` committed 4 on the source. The step retries each call for up to a minute of fake time.
 */
function syncWorld() {
  const clock = new FakeClock();
  const source = new InMemoryCluster(clock);
  const target = new InMemoryCluster(clock);
  const tp = { topic: "orders", partition: 0 };
  source.createTopic("orders", 1);
  target.createTopic("A.orders", 1);
  source.append(tp, makeRecords(10, 0));
  for (let offset = 0; offset < 10; offset++) {
    const stamp = encodeProvenance({ alias: "A", partition: 0, offset });
    target.append({ topic: "A.orders", partition: 0 }, [
      { timestamp: 0, key: null, value: null, headers: [{ key: HEADER, value: stamp }] },
    ]);
  }
  const lease = leaseOf(tp, {
    checkpoint: 10,
    targetOffset: 10,
    offsetMap: [{ source: 0, target: 0, origin: true }],
  });
  const sourceGroups = new FakeGroupAdmin();
  for (const group of ["audit", "billing"]) sourceGroups.setCommitted(group, "orders", 0, 4);
  const targetGroups = new FakeGroupAdmin();
  targetGroups.setPartitions("A.orders", 1);
  const step = {
    sourceGroups,
    targetGroups,
    targetReader: target,
    targetAdmin: target,
    selector: createGroupSelector({ whitelist: ".*" }),
    header: HEADER,
    sourceAlias: "A",
  };
  const retry: KafkaRetry = { clock, deadline: () => clock.now() + 60_000 };
  const context = {
    sourceAdmin: source,
    leases: { list: async () => [lease] },
    mapping: fakeMapping({ rename: (t) => `A.${t}` }),
    logger: new CapturingLogger(),
    retry,
  };
  return { clock, step, context, targetGroups };
}

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

  it("fails a group whose commit is refused for good at the first attempt, and syncs the next", async () => {
    // Prepare: the first commit (audit's) is refused by an ACL, which no retry changes; a second
    // attempt at it would pass.
    const { clock, step, context, targetGroups } = syncWorld();
    const refused = new ReplicatorError("GROUP_ADMIN_FAILED", "committing: GROUP_AUTHORIZATION_FAILED", {
      retryable: false,
    });
    targetGroups.failNext("commitOffsets", refused);
    const startedAt = clock.now();

    // Act
    const report = await runGroupSync(step, context);

    // Assess: audit failed on its one commit, billing synced with the next, no pause between.
    assert.deepEqual(
      report.groups.map((g) => [g.groupId, g.status]),
      [
        ["audit", "failed"],
        ["billing", "synced"],
      ],
    );
    assert.equal(targetGroups.calls.get("commitOffsets"), 2);
    assert.equal(clock.now(), startedAt);
  });

  it("retries a commit that fails retryably (the twin of the case above)", async () => {
    const { step, context, targetGroups } = syncWorld();
    for (let i = 0; i < 2; i++) {
      targetGroups.failNext("commitOffsets", new ReplicatorError("GROUP_ADMIN_FAILED", "NOT_COORDINATOR"));
    }

    const report = await runGroupSync(step, context);

    assert.deepEqual(
      report.groups.map((g) => g.status),
      ["synced", "synced"],
    );
    assert.equal(targetGroups.calls.get("commitOffsets"), 4);
  });

  it('in target.copy "batches" commits the copy of the first record each group had not consumed', async () => {
    // Prepare: source batches 0-2, 3-5, 6-9, copied one per write into A.orders/0 after another
    // producer's record: copies at 1-3, 5-7 and 9-12, each write followed by its marker.
    const clock = new FakeClock();
    const source = new InMemoryCluster(clock);
    const target = new InMemoryCluster(clock);
    const tp = { topic: "orders", partition: 0 };
    const copyTp = { topic: "A.orders", partition: 0 };
    source.createTopic("orders", 1);
    target.createTopic("A.orders", 1);
    for (const [i, size] of [3, 3, 4].entries()) source.append(tp, makeRecords(size, i));
    target.append(copyTp, makeRecords(1, 9));
    const all = { maxRecords: 100, maxBytes: 1 << 20, maxWaitMs: 0 };
    for (const batch of (await source.fetchBatches(tp, 0, all)).batches) {
      await target.write(copyTp, [batch]);
      target.appendNonData(copyTp);
    }
    const lease = leaseOf(tp, {
      checkpoint: 10,
      targetOffset: 14,
      offsetMap: [{ source: 0, target: 1, origin: true }],
    });
    const sourceGroups = new FakeGroupAdmin();
    sourceGroups.setCommitted("billing", "orders", 0, 4);
    sourceGroups.setCommitted("audit", "orders", 0, 7);
    const targetGroups = new FakeGroupAdmin();
    targetGroups.setPartitions("A.orders", 1);
    const step = {
      sourceGroups,
      targetGroups,
      targetReader: target,
      targetAdmin: target,
      selector: createGroupSelector({ whitelist: ".*" }),
      sourceAlias: "A",
      copy: "batches" as const,
      sourceReader: source,
    };

    // Act
    const report = await runGroupSync(step, {
      sourceAdmin: source,
      leases: { list: async () => [lease] },
      mapping: fakeMapping({ rename: (t) => `A.${t}` }),
      logger: new CapturingLogger(),
      retry: { clock, deadline: () => clock.now() + 60_000 },
    });

    // Assess: billing's 4 is the second record of the copy at 5, audit's 7 the second of the one at 9.
    assert.equal(report.synced, 2);
    assert.deepEqual(
      targetGroups.commits.map((c) => [c.groupId, c.offsets.map((o) => o.offset)]),
      [
        ["audit", [10]],
        ["billing", [6]],
      ],
    );
  });
});
