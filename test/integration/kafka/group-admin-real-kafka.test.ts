// KafkaGroupAdmin (lib/kafka/admin/group-admin.ts, group-describe.ts) against real Apache Kafka 4.1 (one
// KRaft node, test/helpers/real-kafka.ts) with real groups of both rebalance protocols: KIP-848
// members (`group.protocol=consumer`, the default for new consumers from Kafka 4.0) and classic
// ones, both librdkafka 2.15.1 consumers (test/helpers/group-member.ts). DescribeGroups answers a
// KIP-848 group as Dead with no members even while consumers are in it, which left the sync's
// "never commit to a group with live members" rule blind; what our adapter sees is checked against
// what the members did and against librdkafka's own Admin API (group-client), which asks
// ConsumerGroupDescribe too. The mock's group handlers model classic groups only: KIP-848 groups
// are proven here.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, afterEach, before, describe, it } from "node:test";
import { isReplicatorError } from "../../../lib/errors.js";
import { KafkaGroupAdmin } from "../../../lib/kafka/admin/group-admin.js";
import { eventually, runGroupClient } from "../../helpers/group-client.js";
import { GroupMembers } from "../../helpers/group-member.js";
import { kcatProduce } from "../../helpers/kcat.js";
import { type RealKafka, startRealKafka } from "../../helpers/real-kafka.js";

const STARTUP_MS = 180_000;
const PARTITIONS = 2;
const PER_PARTITION = 5;

describe("KafkaGroupAdmin with classic and KIP-848 groups, against real Kafka", { timeout: 300_000 }, () => {
  let kafka: RealKafka;
  let admin: KafkaGroupAdmin;
  let members: GroupMembers;

  before(
    async () => {
      kafka = await startRealKafka({ brokers: 1 });
      members = new GroupMembers(kafka.bootstrapServers);
      admin = new KafkaGroupAdmin({ brokers: kafka.bootstrapServers, requestTimeoutMs: 10_000 });
    },
    { timeout: STARTUP_MS },
  );

  // A member left running would keep its group live for the next test's checks.
  afterEach(async () => {
    await members.stopAll();
  });

  after(async () => {
    await admin?.close();
    await kafka?.stop();
  });

  /** A topic of PARTITIONS partitions holding PER_PARTITION records `p<partition>-<i>` each. */
  async function filledTopic(): Promise<string> {
    const topic = `test-topic-${randomUUID()}`;
    await kafka.createTopic(topic, PARTITIONS, 1);
    for (let partition = 0; partition < PARTITIONS; partition++) {
      const records = Array.from({ length: PER_PARTITION }, (_, i) => ({
        key: null,
        value: Buffer.from(`p${partition}-${i}`),
      }));
      await kcatProduce({ brokers: kafka.bootstrapServers, topic, partition, records });
    }
    return topic;
  }

  /**
   * Until ListGroups has every one of `groupIds` Stable (a join or reconciliation has settled).
   * ListGroups, not describeGroups: it answered KIP-848 groups' states before this change too, so
   * a test of describeGroups waits on something other than what it checks.
   */
  const stable = (groupIds: readonly string[]) =>
    eventually(
      `groups ${groupIds.join(", ")} Stable`,
      async () => {
        const listed = (await admin.listGroups()).filter((g) => groupIds.includes(g.groupId));
        return listed.length === groupIds.length && listed.every((g) => g.state === "Stable")
          ? listed
          : undefined;
      },
      60_000,
    );

  it("lists classic and KIP-848 groups with their types, as librdkafka's ListConsumerGroups does", async () => {
    // Prepare
    const topic = await filledTopic();
    const [kip848, classic] = [`kip848-${randomUUID()}`, `classic-${randomUUID()}`];
    const started = [
      members.start(kip848, "consumer", [topic]),
      members.start(kip848, "consumer", [topic]),
      members.start(classic, "classic", [topic]),
    ];
    await Promise.all(started.map((m) => m.assigned()));

    // Act
    const listed = await stable([kip848, classic]);
    const librdkafka = await runGroupClient("states", kafka.bootstrapServers, ["Stable"]);

    // Assess: both listed, each with its protocol's type (today's ListGroups v4 has no type)
    assert.deepEqual(listed, [
      { groupId: classic, protocolType: "consumer", state: "Stable", type: "classic" },
      { groupId: kip848, protocolType: "consumer", state: "Stable", type: "consumer" },
    ]);
    assert.deepEqual(
      librdkafka
        .filter((l) => l.id === kip848 || l.id === classic)
        .map((l) => l.id)
        .sort(),
      [classic, kip848].sort(),
    );
  });

  it("describes a KIP-848 group's live members (ConsumerGroupDescribe), a classic group's (DescribeGroups), and both Empty once they left", async () => {
    // Prepare
    const topic = await filledTopic();
    const [kip848, classic, unknown] = [
      `kip848-${randomUUID()}`,
      `classic-${randomUUID()}`,
      `unknown-${randomUUID()}`,
    ];
    const started = [
      members.start(kip848, "consumer", [topic]),
      members.start(kip848, "consumer", [topic]),
      members.start(classic, "classic", [topic]),
    ];
    await Promise.all(started.map((m) => m.assigned()));
    await stable([kip848, classic]);

    // Act
    const described = await admin.describeGroups([kip848, classic, unknown]);
    const librdkafka = await runGroupClient("admin", kafka.bootstrapServers, [kip848, classic]);
    await members.stopAll();
    const left = await admin.describeGroups([kip848, classic]);

    // Assess: the KIP-848 group's two members are seen (DescribeGroups alone said Dead, 0)
    assert.deepEqual(described, [
      { groupId: kip848, state: "Stable", members: 2, type: "consumer" },
      { groupId: classic, state: "Stable", members: 1, type: "classic" },
      { groupId: unknown, state: "Dead", members: 0, type: "classic" },
    ]);
    for (const g of described.slice(0, 2)) {
      const seen = librdkafka.find((l) => l.kind === "DESCRIBED" && l.id === g.groupId);
      assert.equal(seen?.members, String(g.members), `librdkafka's view of ${g.groupId}`);
    }
    // A member leaves at once (KIP-848: a leave heartbeat; classic: LeaveGroup): the groups
    // are still there, Empty, not Dead (unknown)
    assert.deepEqual(left, [
      { groupId: kip848, state: "Empty", members: 0, type: "consumer" },
      { groupId: classic, state: "Empty", members: 0, type: "classic" },
    ]);
  });

  it("an admin commit is refused while members are in, either protocol (GROUP_NOT_EMPTY naming the group), and lands once they left; a KIP-848 member starts there", async () => {
    // Prepare: one member per group reads everything and commits it
    const topic = await filledTopic();
    const [kip848, classic] = [`kip848-${randomUUID()}`, `classic-${randomUUID()}`];
    const live = [members.start(kip848, "consumer", [topic]), members.start(classic, "classic", [topic])];
    await Promise.all(live.map((m) => m.waitFor(PARTITIONS * PER_PARTITION)));
    const target = [
      { topic, partition: 0, offset: 1 },
      { topic, partition: 1, offset: 3, metadata: "kafka-mirror failover" },
    ];

    // Act: while they are in
    const described = await admin.describeGroups([kip848, classic]);
    const refusals = await Promise.all(
      [kip848, classic].map((g) =>
        admin.commitOffsets(g, target).then(
          () => assert.fail(`the commit to ${g} was accepted while it had a member`),
          (error: unknown) => error,
        ),
      ),
    );

    // Assess: seen live, refused, typed, each naming its group
    assert.deepEqual(
      described.map((d) => [d.groupId, d.members, d.type]),
      [
        [kip848, 1, "consumer"],
        [classic, 1, "classic"],
      ],
    );
    refusals.forEach((refused, i) => {
      const groupId = [kip848, classic][i] as string;
      assert.ok(isReplicatorError(refused, "GROUP_NOT_EMPTY"), String(refused));
      assert.equal(refused.details.groupId, groupId);
      assert.equal(refused.details.kafkaError, "UNKNOWN_MEMBER_ID");
      assert.match(refused.message, new RegExp(`group "${groupId}"`));
    });

    // Act: they leave; the commit again; a new KIP-848 member of each group id
    await members.stopAll();
    for (const g of [kip848, classic]) await admin.commitOffsets(g, target);
    const committed = await Promise.all([kip848, classic].map((g) => admin.fetchOffsets(g)));
    const next = [kip848, classic].map((g) => members.start(g, "consumer", [topic]));
    const expected = PER_PARTITION - 1 + (PER_PARTITION - 3);
    await Promise.all(next.map((m) => m.waitFor(expected)));
    await new Promise((r) => setTimeout(r, 500));

    // Assess: exactly what we committed; each new member (the classic group upgraded to KIP-848
    // by its first member, as a failover switches consumers) starts at those offsets
    for (const c of committed) {
      assert.deepEqual(
        c,
        target.map((t) => ({ ...t, metadata: t.metadata ?? "" })),
      );
    }
    for (const m of next) {
      const byPartition = (p: number) => m.records.filter((r) => r.partition === p).map((r) => r.offset);
      assert.deepEqual([0, 1].map(byPartition), [
        [1, 2, 3, 4],
        [3, 4],
      ]);
    }
  });
});
