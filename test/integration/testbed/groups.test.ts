// Pins the test broker's consumer groups (our launcher's ListGroups/DescribeGroups,
// testbed/mock-kafka/group-admin.c, and our patch testbed/mock-kafka/patch-groups.pl of
// librdkafka 2.15.1's mock) with independent clients only: kcat -G members (Debian's kcat,
// librdkafka 2.0.2), librdkafka 2.15.1's own group listing and admin calls
// (.testbed/bin/group-client, testbed/group-client/) and kafkajs's public Admin. Our adapter is
// tested against this bed in test/integration/kafka/group-admin.test.ts. Against a launcher
// without group-admin.c every test fails (ListGroups/DescribeGroups unsupported); against the
// build without patch-groups.pl the last two fail (TESTING.md).
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import kafkajs from "kafkajs";
import { eventually, type GroupClientLine, runGroupClient } from "../../helpers/group-client.js";
import { kcatProduce } from "../../helpers/kcat.js";
import { KcatGroupMembers, kcatFilledTopic } from "../../helpers/kcat-group.js";
import { type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";

const PARTITIONS = 4;
const PER_PARTITION = 5;

describe("test bed: consumer groups as Kafka's coordinator answers for them", { timeout: 120_000 }, () => {
  let kafka: MockKafka;
  let kafkajsAdmin: kafkajs.Admin;
  let members: KcatGroupMembers;

  before(async () => {
    kafka = await startMockKafka({ brokers: 3 });
    members = new KcatGroupMembers(kafka.bootstrapServers);
    kafkajsAdmin = new kafkajs.Kafka({
      brokers: kafka.bootstrapServers,
      logLevel: kafkajs.logLevel.NOTHING,
    }).admin();
    await kafkajsAdmin.connect();
  });

  after(async () => {
    await members?.stopAll();
    await kafkajsAdmin?.disconnect();
    await kafka?.stop();
  });

  const describeAdmin = async (groupId: string) =>
    (await runGroupClient("admin", kafka.bootstrapServers, [groupId])).find((l) => l.kind === "DESCRIBED");

  /** Until librdkafka's OffsetFetch sees every partition committed at its end. */
  const committedAtEnd = (groupId: string) =>
    eventually(`group ${groupId} committed every partition`, async () => {
      const offsets = (await runGroupClient("offsets", kafka.bootstrapServers, [groupId])).filter(
        (l) => l.kind === "OFFSET",
      );
      return offsets.length === PARTITIONS && offsets.every((o) => o.offset === String(PER_PARTITION))
        ? offsets
        : undefined;
    });

  it("lists and describes kcat -G members as librdkafka's two APIs and kafkajs see them", async () => {
    // Prepare
    const topic = await kcatFilledTopic(kafka, "groups", PARTITIONS, PER_PARTITION);
    const [g, h] = [`two-${randomUUID()}`, `one-${randomUUID()}`];
    // The second member joins a Stable group: the first must rejoin, then the join completes.
    members.start(g, topic);
    members.start(g, topic);
    members.start(h, topic);

    // Act: the legacy call asks every broker's ListGroups, then DescribeGroups (v0)
    const legacy = await eventually("both groups Stable", async () => {
      const lines = await runGroupClient("legacy", kafka.bootstrapServers);
      const stable = (id: string, n: number) =>
        lines.some(
          (l) => l.kind === "GROUP" && l.id === id && l.state === "Stable" && l.members === String(n),
        );
      return stable(g, 2) && stable(h, 1) ? lines : undefined;
    });
    const admin = await runGroupClient("admin", kafka.bootstrapServers);

    // Assess: each group once (only its coordinator lists it), members as librdkafka joined
    const listed = legacy.filter((l) => l.kind === "GROUP" && l.id === g);
    assert.equal(listed.length, 1, JSON.stringify(legacy));
    assert.equal(listed[0]?.protocol_type, "consumer");
    assert.equal(listed[0]?.protocol, "range");
    const gMembers = legacy.filter((l) => l.kind === "MEMBER" && l.group === g);
    assert.equal(gMembers.length, 2);
    for (const m of gMembers) {
      assert.equal(m.client_id, "rdkafka");
      assert.equal(m.host, "/127.0.0.1");
      assert.ok(Number(m.metadata) > 0 && Number(m.assignment) > 0, JSON.stringify(m));
    }
    assert.deepEqual(pick(admin, "LISTED", g), { kind: "LISTED", id: g, state: "Stable", simple: "0" });
    assert.deepEqual(pick(admin, "DESCRIBED", g), {
      kind: "DESCRIBED",
      id: g,
      state: "Stable",
      members: "2",
      err: "NO_ERROR",
    });
    const assigned = admin
      .filter((l) => l.kind === "MEMBER" && l.group === g)
      .flatMap((l) => (l.assigned ?? "").split(","))
      .sort();
    assert.deepEqual(assigned, Array.from({ length: PARTITIONS }, (_, p) => `${topic}:${p}`).sort());

    const { groups } = await kafkajsAdmin.describeGroups([g, h]);
    assert.deepEqual(
      // Answers come coordinator by coordinator.
      new Map(groups.map((x) => [x.groupId, [x.state, x.protocolType, x.protocol, x.members.length]])),
      new Map([
        [g, ["Stable", "consumer", "range", 2]],
        [h, ["Stable", "consumer", "range", 1]],
      ]),
    );
    assert.ok(
      groups.every((x) => x.members.every((m) => m.clientId === "rdkafka" && m.clientHost === "/127.0.0.1")),
    );
    const kafkajsListed = (await kafkajsAdmin.listGroups()).groups.filter(
      (x) => x.groupId === g || x.groupId === h,
    );
    assert.equal(kafkajsListed.length, 2);
    assert.ok(kafkajsListed.every((x) => x.protocolType === "consumer"));
  });

  it("lists a group known only by committed offsets as Empty, and describes an unknown one as Dead", async () => {
    // Prepare: an admin commit, never a member
    const topic = await kcatFilledTopic(kafka, "groups", PARTITIONS, PER_PARTITION);
    const [offsetsOnly, unknown] = [`offsets-only-${randomUUID()}`, `unknown-${randomUUID()}`];
    const altered = await runGroupClient("alter", kafka.bootstrapServers, [offsetsOnly, `${topic}:1:3`]);
    assert.deepEqual(pick(altered, "RESULT"), { kind: "RESULT", err: "NO_ERROR" });

    // Act
    const legacy = await runGroupClient("legacy", kafka.bootstrapServers);
    const admin = await runGroupClient("admin", kafka.bootstrapServers);
    const described = await runGroupClient("admin", kafka.bootstrapServers, [unknown]);
    const offsets = await runGroupClient("offsets", kafka.bootstrapServers, [offsetsOnly]);

    // Assess: Kafka's classic coordinator answers these so
    assert.deepEqual(pick(legacy, "GROUP", offsetsOnly), {
      kind: "GROUP",
      id: offsetsOnly,
      state: "Empty",
      protocol_type: "-",
      protocol: "-",
      broker: pick(legacy, "GROUP", offsetsOnly)?.broker ?? "?",
      members: "0",
      err: "NO_ERROR",
    });
    assert.deepEqual(pick(admin, "LISTED", offsetsOnly), {
      kind: "LISTED",
      id: offsetsOnly,
      state: "Empty",
      simple: "1",
    });
    assert.deepEqual(pick(described, "DESCRIBED", unknown), {
      kind: "DESCRIBED",
      id: unknown,
      state: "Dead",
      members: "0",
      err: "NO_ERROR",
    });
    assert.deepEqual(
      offsets.filter((l) => l.kind === "OFFSET"),
      [{ kind: "OFFSET", topic, partition: "1", offset: "3", err: "NO_ERROR" }],
    );
    const { groups } = await kafkajsAdmin.describeGroups([unknown]);
    assert.equal(groups[0]?.state, "Dead");
  });

  it("regression (the 44 s trap): a group whose last member left is Empty at once, and the next member starts at once where it committed", async () => {
    // Prepare: one member reads everything and commits
    const topic = await kcatFilledTopic(kafka, "groups", PARTITIONS, PER_PARTITION);
    const groupId = `reuse-${randomUUID()}`;
    const first = members.start(groupId, topic);
    await first.waitFor(PARTITIONS * PER_PARTITION);
    await committedAtEnd(groupId);

    // Act: it leaves (SIGTERM: LeaveGroup); a new member of the same group id joins
    await first.stop();
    const afterLeave = await describeAdmin(groupId);
    const startedAt = Date.now();
    const next = members.start(groupId, topic);
    await kcatProduce({
      brokers: kafka.bootstrapServers,
      topic,
      partition: 2,
      records: [{ key: null, value: Buffer.from("late") }],
    });
    await next.waitFor(1, 10_000);

    // Assess: Empty right after the leave (upstream's mock: PreparingRebalance for 44 s); the new
    // member got its assignment without that wait and read nothing the group had committed
    assert.deepEqual(afterLeave, {
      kind: "DESCRIBED",
      id: groupId,
      state: "Empty",
      members: "0",
      err: "NO_ERROR",
    });
    assert.ok(Date.now() - startedAt < 10_000);
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(next.consumed, [{ topic, partition: 2, offset: PER_PARTITION, value: "late" }]);
  });

  it("refuses an admin commit while the group has members, accepts it once the group is Empty, and the next member starts there", async () => {
    // Prepare
    const topic = await kcatFilledTopic(kafka, "groups", PARTITIONS, PER_PARTITION);
    const groupId = `admin-commit-${randomUUID()}`;
    const first = members.start(groupId, topic);
    await first.waitFor(PARTITIONS * PER_PARTITION);
    await committedAtEnd(groupId);

    // Act: librdkafka's AlterConsumerGroupOffsets (generation -1, no member id), before and after the leave
    const whileMember = await runGroupClient("alter", kafka.bootstrapServers, [groupId, `${topic}:0:1`]);
    await first.stop();
    const whenEmpty = await runGroupClient("alter", kafka.bootstrapServers, [groupId, `${topic}:0:1`]);

    // Assess: Kafka answers UNKNOWN_MEMBER_ID while anyone is in the group
    assert.deepEqual(pick(whileMember, "ALTERED"), {
      kind: "ALTERED",
      topic,
      partition: "0",
      err: "UNKNOWN_MEMBER_ID",
    });
    assert.deepEqual(pick(whenEmpty, "ALTERED"), { kind: "ALTERED", topic, partition: "0", err: "NO_ERROR" });

    // Act: a new member of the group id
    const next = members.start(groupId, topic);
    await next.waitFor(PER_PARTITION - 1, 10_000);

    // Assess: it starts where the admin commit put partition 0, the others at their end
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(
      next.consumed.map((c) => `${c.partition}:${c.offset}:${c.value}`),
      ["0:1:p0-1", "0:2:p0-2", "0:3:p0-3", "0:4:p0-4"],
    );
  });
});

function pick(lines: readonly GroupClientLine[], kind: string, id?: string): GroupClientLine | undefined {
  return lines.find((l) => l.kind === kind && (id === undefined || l.id === id));
}
