// The reader's current leader epoch (KIP-320) against librdkafka's mock cluster, which checks it in
// Fetch and OffsetForLeaderEpoch (rd_kafka_mock_partition_leader_epoch_check) and bumps a
// partition's epoch on every set-leader. A leader that moves away and back is the case only the
// epoch catches: our metadata still names the right broker, so nothing but the epoch tells the
// reader that the leadership it read under is over. Real Kafka: leader-epoch-real-kafka.test.ts.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import type { TopicPartition } from "../../../lib/core/model.js";
import { KafkaPartitionReader } from "../../../lib/kafka/read/source-reader.js";
import { KafkaErrorCode } from "../../../lib/kafka/wire/error-codes.js";
import { CapturingLogger } from "../../helpers/fake-observability.js";
import { kcatProduce } from "../../helpers/kcat.js";
import { rawFetch, rawOffsetForLeaderEpoch, reroutes } from "../../helpers/leader-epoch-probes.js";
import { type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";

const LIMITS = { maxRecords: 100, maxBytes: 1 << 20, maxWaitMs: 0 };

function values(tag: string, count: number) {
  return Array.from({ length: count }, (_, i) => ({ key: null, value: Buffer.from(`${tag}-${i}`) }));
}

describe("leader epochs in Fetch and OffsetForLeaderEpoch, against the mock cluster", () => {
  let kafka: MockKafka;
  const readers: KafkaPartitionReader[] = [];

  before(async () => {
    kafka = await startMockKafka({ brokers: 3 });
  });

  after(async () => {
    await Promise.allSettled(readers.map((r) => r.close()));
    await kafka?.stop();
  });

  /** A reader without the pump's retries: one call, at most one re-route. */
  function bareReader(logger: CapturingLogger): KafkaPartitionReader {
    const reader = new KafkaPartitionReader({
      brokers: kafka.bootstrapServers,
      requestTimeoutMs: 5000,
      connectionTimeoutMs: 2000,
      isolationLevel: "read_uncommitted",
      logger,
    });
    readers.push(reader);
    return reader;
  }

  /** A topic led by broker 1 with `a-0..a-2` read by `reader`; then its leader moves to 2 and back. */
  async function readThenBounce(reader: KafkaPartitionReader) {
    const tp: TopicPartition = { topic: `test-topic-${randomUUID()}`, partition: 0 };
    await kafka.createTopic(tp.topic, 1, 3);
    await kafka.setLeader(tp.topic, 0, 1);
    await kcatProduce({ brokers: kafka.bootstrapServers, ...tp, records: values("a", 3) });
    const { leaderEpoch: readUnder } = await reader.describePartition(tp);
    assert.equal((await reader.fetch(tp, 0, LIMITS)).records.length, 3);
    await kafka.setLeader(tp.topic, 0, 2);
    await kafka.setLeader(tp.topic, 0, 1);
    return { tp, readUnder, leader: await kafka.listener(1) };
  }

  it("a fetch under the old epoch is refused by the broker; the reader re-routes once and reads on", async () => {
    // Prepare: read under epoch E on broker 1; the leader goes to 2 and back (E + 2) and more is written.
    const logger = new CapturingLogger();
    const reader = bareReader(logger);
    const { tp, readUnder, leader } = await readThenBounce(reader);
    await kcatProduce({ brokers: kafka.bootstrapServers, ...tp, records: values("b", 2) });

    // The broker's check is live: the epoch we read under is refused, "no epoch" is answered.
    assert.equal(await rawFetch(leader, tp, 0, readUnder), KafkaErrorCode.FENCED_LEADER_EPOCH);
    assert.equal(await rawFetch(leader, tp, 0, -1), KafkaErrorCode.NONE);

    // Act
    const fetched = await reader.fetch(tp, 0, LIMITS);

    // Assess: every record, under both epochs, after exactly one re-route caused by the epoch.
    assert.deepEqual(
      fetched.records.map((r) => r.value?.toString()),
      ["a-0", "a-1", "a-2", "b-0", "b-1"],
    );
    assert.deepEqual(fetched.epochs, [
      { offset: 0, epoch: readUnder },
      { offset: 3, epoch: readUnder + 2 },
    ]);
    assert.deepEqual(reroutes(logger), ["KafkaPartitionError: FENCED_LEADER_EPOCH"]);
    assert.equal((await reader.describePartition(tp)).leaderEpoch, readUnder + 2);
  });

  it("OffsetForLeaderEpoch carries the epoch too: refused under the old one, answered after the re-route", async () => {
    const logger = new CapturingLogger();
    const reader = bareReader(logger);
    const { tp, readUnder, leader } = await readThenBounce(reader);
    assert.equal(
      await rawOffsetForLeaderEpoch(leader, tp, readUnder, readUnder),
      KafkaErrorCode.FENCED_LEADER_EPOCH,
    );

    const end = await reader.endOffsetForLeaderEpoch(tp, readUnder);

    assert.equal(end, 3, "epoch E ended after a-2");
    assert.deepEqual(reroutes(logger), ["KafkaPartitionError: FENCED_LEADER_EPOCH"]);
  });

  it("a broker without Metadata v10 tells no epochs: the reader sends -1 and reads as before", async () => {
    // Prepare: this cluster's Metadata stops at v9 (no topic ids; kafkajs's v6 is unaffected).
    const old = await startMockKafka({ brokers: 3 });
    try {
      await old.command("apiversion 3 0 9");
      const logger = new CapturingLogger();
      const reader = new KafkaPartitionReader({
        brokers: old.bootstrapServers,
        requestTimeoutMs: 5000,
        logger,
      });
      readers.push(reader);
      const tp = { topic: `test-topic-${randomUUID()}`, partition: 0 };
      await old.createTopic(tp.topic, 1, 3);
      await old.setLeader(tp.topic, 0, 1);
      await kcatProduce({ brokers: old.bootstrapServers, ...tp, records: values("a", 2) });
      assert.equal((await reader.fetch(tp, 0, LIMITS)).records.length, 2);
      await old.setLeader(tp.topic, 0, 2);
      await old.setLeader(tp.topic, 0, 1);

      // Act
      const fetched = await reader.fetch(tp, 0, LIMITS);

      // Assess: answered at once; nothing was refused, so nothing was re-routed.
      assert.equal(fetched.records.length, 2);
      assert.deepEqual(reroutes(logger), []);
      assert.deepEqual(await reader.describePartition(tp), { topicId: null, leaderEpoch: -1 });
    } finally {
      await old.stop();
    }
  });
});
