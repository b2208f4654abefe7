/**
 * syncGroup / syncGroups over in-memory clusters and a fake GroupAdmin: commits the exact
 * translation on the (renamed) target topic, never for a group with members on the target,
 * never backwards unless forced, and one failing group does not stop the others.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { partitionKey } from "../../../lib/core/model.js";
import type { Lease } from "../../../lib/core/ports.js";
import { encodeProvenance } from "../../../lib/core/provenance.js";
import { ReplicatorError } from "../../../lib/errors.js";
import { createGroupSelector } from "../../../lib/offsets/group-selection.js";
import { syncGroup, syncGroups } from "../../../lib/offsets/sync.js";
import { FakeClock } from "../../helpers/fake-clock.js";
import { InMemoryCluster, makeRecords } from "../../helpers/fake-cluster.js";
import { FakeGroupAdmin } from "../../helpers/fake-groups.js";
import { leaseOf } from "../../helpers/fake-leases.js";
import { fakeMapping } from "../../helpers/fake-mapping.js";
import { CapturingLogger } from "../../helpers/fake-observability.js";

const HEADER = Buffer.from("kafka-mirror.provenance");

/**
 * Source `orders` (2 partitions, 10 records each), copied to `A.orders` with a record of another
 * source after every copy: the copy of source offset i sits at target offset 2i.
 */
function world() {
  const clock = new FakeClock();
  const source = new InMemoryCluster(clock);
  const target = new InMemoryCluster(clock);
  source.createTopic("orders", 2);
  target.createTopic("A.orders", 2);
  const leases = new Map<string, Lease>();
  for (const partition of [0, 1]) {
    const tp = { topic: "orders", partition };
    source.append(tp, makeRecords(10, partition));
    for (let i = 0; i < 10; i++) {
      const ours = encodeProvenance({ alias: "A", partition, offset: i });
      const theirs = encodeProvenance({ alias: "B", partition, offset: i });
      target.append({ topic: "A.orders", partition }, [
        { timestamp: 0, key: null, value: null, headers: [{ key: HEADER, value: ours }] },
        { timestamp: 0, key: null, value: null, headers: [{ key: HEADER, value: theirs }] },
      ]);
    }
    const offsetMap = [{ source: 0, target: 0, origin: true as const }];
    leases.set(partitionKey(tp), leaseOf(tp, { checkpoint: 10, targetOffset: 20, offsetMap }));
  }
  const sourceGroups = new FakeGroupAdmin();
  const targetGroups = new FakeGroupAdmin();
  targetGroups.setPartitions("A.orders", 2);
  const deps = {
    sourceGroups,
    targetGroups,
    sourceAdmin: source,
    translate: {
      reader: target,
      admin: target,
      header: HEADER,
      sourceAlias: "A",
      retry: { clock, deadline: () => clock.now() + 30_000 },
    },
    mapping: fakeMapping({ rename: (t) => `A.${t}` }),
  };
  return { deps, leases, sourceGroups, targetGroups, source, target };
}

const options = { sourceAlias: "A" };

async function committedOn(groups: FakeGroupAdmin, groupId: string, topic: string, partition: number) {
  const offsets = await groups.fetchOffsets(groupId);
  return offsets.find((o) => o.topic === topic && o.partition === partition)?.offset;
}

describe("syncGroup", () => {
  it("commits each partition's exact translation on the renamed target topic", async () => {
    const { deps, leases, sourceGroups, targetGroups } = world();
    sourceGroups.setCommitted("billing", "orders", 0, 4);
    sourceGroups.setCommitted("billing", "orders", 1, 10); // caught up: after the last copy

    const result = await syncGroup(deps, "billing", leases, options);

    assert.equal(result.status, "synced");
    assert.equal(await committedOn(targetGroups, "billing", "A.orders", 0), 8);
    assert.equal(await committedOn(targetGroups, "billing", "A.orders", 1), 19);
    assert.equal(result.notCopied, 0);
  });

  it("never commits for a group with members on the target", async () => {
    const { deps, leases, sourceGroups, targetGroups } = world();
    sourceGroups.setCommitted("billing", "orders", 0, 4);
    targetGroups.setGroup("billing", { members: 2 });

    const result = await syncGroup(deps, "billing", leases, options);

    assert.equal(result.status, "active");
    assert.deepEqual(targetGroups.commits, []);
  });

  it("never commits for a group in a state only a group with members is in, dry run included", async () => {
    // A KIP-848 group can be described Reconciling between members; a classic one rebalancing.
    const { deps, leases, sourceGroups, targetGroups } = world();
    sourceGroups.setCommitted("billing", "orders", 0, 4);
    targetGroups.setGroup("billing", { members: 0, state: "Reconciling", type: "consumer" });

    const previewed = await syncGroup(deps, "billing", leases, { ...options, dryRun: true });
    const result = await syncGroup(deps, "billing", leases, options);

    assert.deepEqual([previewed.status, result.status], ["active", "active"]);
    assert.deepEqual(targetGroups.commits, []);
  });

  it("reports a member that joined between the look and the commit as active, commits nothing", async () => {
    const { deps, leases, sourceGroups, targetGroups } = world();
    sourceGroups.setCommitted("billing", "orders", 0, 4);
    targetGroups.failNext(
      "commitOffsets",
      new ReplicatorError("GROUP_NOT_EMPTY", 'committing offsets of group "billing" refused'),
    );

    const result = await syncGroup(deps, "billing", leases, options);

    assert.equal(result.status, "active");
    assert.deepEqual(targetGroups.commits, []);
  });

  it("never moves a committed target offset backwards, unless forced", async () => {
    const { deps, leases, sourceGroups, targetGroups } = world();
    sourceGroups.setCommitted("billing", "orders", 0, 4); // translates to 8
    targetGroups.setCommitted("billing", "A.orders", 0, 12); // the group read further on the target

    const kept = await syncGroup(deps, "billing", leases, options);
    assert.equal(kept.status, "up-to-date");
    assert.equal(await committedOn(targetGroups, "billing", "A.orders", 0), 12);

    const forced = await syncGroup(deps, "billing", leases, { ...options, force: true });
    assert.equal(forced.status, "synced");
    assert.equal(await committedOn(targetGroups, "billing", "A.orders", 0), 8);
  });

  it("commits nothing with dryRun", async () => {
    const { deps, leases, sourceGroups, targetGroups } = world();
    sourceGroups.setCommitted("billing", "orders", 0, 4);
    const result = await syncGroup(deps, "billing", leases, { ...options, dryRun: true });
    assert.equal(result.status, "synced");
    assert.equal(result.committed.length, 1);
    assert.deepEqual(targetGroups.commits, []);
  });

  it("counts records not yet copied and a group ahead of the mirror", async () => {
    const { deps, leases, sourceGroups } = world();
    deps.sourceAdmin.append({ topic: "orders", partition: 0 }, makeRecords(5, 9)); // 10..14 not copied
    sourceGroups.setCommitted("billing", "orders", 0, 12);

    const result = await syncGroup(deps, "billing", leases, { ...options, dryRun: true });

    const [row] = result.rows;
    assert.equal(row?.translation?.targetOffset, 19); // right after the last copy
    assert.equal(row?.notCopied, 5);
    assert.equal(row?.aheadOfMirror, 2);
  });

  it("commits nothing while another writer's open transaction hides copies the translation needs", async () => {
    const { deps, leases, sourceGroups, targetGroups, source, target } = world();
    const tp = { topic: "A.orders", partition: 0 };
    // Another writer opens a transaction at 20; source offsets 10 and 11 are copied after it.
    target.openTransaction(tp);
    target.append(tp, [{ timestamp: 0, key: null, value: null, headers: [] }]);
    source.append({ topic: "orders", partition: 0 }, makeRecords(2, 0));
    for (const offset of [10, 11]) {
      const value = encodeProvenance({ alias: "A", partition: 0, offset });
      target.append(tp, [{ timestamp: 0, key: null, value: null, headers: [{ key: HEADER, value }] }]);
    }
    sourceGroups.setCommitted("billing", "orders", 0, 11);

    await assert.rejects(syncGroup(deps, "billing", leases, options), { code: "TARGET_TRANSACTION_OPEN" });
    assert.deepEqual(targetGroups.commits, []);

    target.endTransaction(tp);
    await syncGroup(deps, "billing", leases, options);
    assert.equal(await committedOn(targetGroups, "billing", "A.orders", 0), 22);
  });
});

describe("syncGroups", () => {
  it("syncs the selected groups only, and one failing group does not stop the others", async () => {
    const { deps, leases, sourceGroups, targetGroups } = world();
    for (const id of ["app-a", "app-b", "other"]) sourceGroups.setCommitted(id, "orders", 0, 3);
    const fetch = sourceGroups.fetchOffsets.bind(sourceGroups);
    sourceGroups.fetchOffsets = async (groupId, topics) => {
      if (groupId === "app-a") throw new ReplicatorError("KAFKA_FATAL", "coordinator unavailable");
      return fetch(groupId, topics);
    };

    const report = await syncGroups(
      {
        ...deps,
        leases: { list: async () => [...leases.values()] },
        selector: createGroupSelector({ whitelist: "app-.*" }),
        logger: new CapturingLogger(),
      },
      options,
    );

    assert.deepEqual(
      report.groups.map((g) => [g.groupId, g.status]),
      [
        ["app-a", "failed"],
        ["app-b", "synced"],
      ],
    );
    assert.equal(report.failed, 1);
    assert.equal(await committedOn(targetGroups, "app-b", "A.orders", 0), 6);
    assert.equal(await committedOn(targetGroups, "other", "A.orders", 0), undefined);
  });
});
