// The in-memory GroupAdmin must keep the port's contract as the real adapter does against the
// test broker (test/integration/kafka/group-admin.test.ts), or unit tests of sync and failover
// built on it would prove the wrong thing.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isReplicatorError } from "../../../lib/errors.js";
import { FakeGroupAdmin } from "../../helpers/fake-groups.js";

describe("FakeGroupAdmin", () => {
  it("refuses a commit while the group has members and changes nothing, then commits once it is empty", async () => {
    // Prepare
    const groups = new FakeGroupAdmin();
    groups.setGroup("g", { members: 2 });
    groups.setCommitted("g", "t", 0, 7);

    // Act
    const refused = await groups
      .commitOffsets("g", [{ topic: "t", partition: 0, offset: 3 }])
      .catch((e) => e);
    groups.emptyGroup("g");
    await groups.commitOffsets("g", [{ topic: "t", partition: 0, offset: 3 }]);

    // Assess
    assert.ok(isReplicatorError(refused, "GROUP_NOT_EMPTY"));
    assert.equal(refused.details.groupId, "g");
    assert.deepEqual(await groups.fetchOffsets("g"), [{ topic: "t", partition: 0, offset: 3, metadata: "" }]);
    assert.deepEqual(groups.commits, [{ groupId: "g", offsets: [{ topic: "t", partition: 0, offset: 3 }] }]);
  });

  it("answers like Kafka's coordinator: unknown ids Dead, offsets-only groups Empty and classic, named topics with -1", async () => {
    // Prepare
    const groups = new FakeGroupAdmin();
    groups.setPartitions("t", 2);
    await groups.commitOffsets("admin-only", [{ topic: "t", partition: 1, offset: 5 }]);
    groups.setGroup("live", { members: 1, type: "consumer" });

    // Act + Assess
    assert.deepEqual(await groups.listGroups(), [
      { groupId: "admin-only", protocolType: "", state: "Empty", type: "classic" },
      { groupId: "live", protocolType: "consumer", state: "Stable", type: "consumer" },
    ]);
    assert.deepEqual(await groups.describeGroups(["live", "nope"]), [
      { groupId: "live", state: "Stable", members: 1, type: "consumer" },
      { groupId: "nope", state: "Dead", members: 0, type: "classic" },
    ]);
    assert.deepEqual(
      (await groups.fetchOffsets("admin-only", ["t"])).map((o) => o.offset),
      [-1, 5],
    );
  });

  it("refuses what the adapter refuses before sending: a -1 offset (OffsetFetch's 'none'), a repeated partition, an empty group id", async () => {
    // Prepare: -1 is what fetchOffsets answers for a partition with nothing committed
    const groups = new FakeGroupAdmin();
    groups.setPartitions("t", 1);
    const [uncommitted] = await groups.fetchOffsets("g", ["t"]);

    // Act
    const refusals = await Promise.all(
      [
        () => groups.commitOffsets("g", [{ topic: "t", partition: 0, offset: uncommitted?.offset ?? 0 }]),
        () =>
          groups.commitOffsets("g", [
            { topic: "t", partition: 0, offset: 1 },
            { topic: "t", partition: 0, offset: 2 },
          ]),
        () => groups.commitOffsets("", [{ topic: "t", partition: 0, offset: 1 }]),
        () => groups.fetchOffsets(""),
        () => groups.describeGroups([""]),
      ].map((call) =>
        call().then(
          () => undefined,
          (e: unknown) => e,
        ),
      ),
    );

    // Assess: typed as KafkaGroupAdmin types them, and nothing committed
    assert.equal(uncommitted?.offset, -1);
    assert.deepEqual(
      refusals.map((e) => isReplicatorError(e, "CONFIG_INVALID")),
      [true, true, true, true, true],
    );
    assert.deepEqual(groups.commits, []);
    assert.deepEqual(await groups.listGroups(), []);
  });

  it("fails the next call of the named method once", async () => {
    const groups = new FakeGroupAdmin();
    groups.failNext("describeGroups", new Error("boom"));
    await assert.rejects(groups.describeGroups(["g"]), /boom/);
    assert.deepEqual(await groups.describeGroups(["g"]), [
      { groupId: "g", state: "Dead", members: 0, type: "classic" },
    ]);
  });
});
