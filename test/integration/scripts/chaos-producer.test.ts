// Regression: the short chaos test on real Kafka failed with "only 7150 records produced" (of
// 7,200). The replicator was not at fault: the chaos producer's own records never reached the
// source. It sent each round of a topic as one kafkajs send across partitions on several brokers;
// kafkajs 2.2.4 retries only the brokers that did not answer, so after a leader move the moved
// partition, now led by a broker that had answered, was skipped and the send resolved anyway.
// scripts/chaos/producer.ts now sends each partition on its own. The mock moves the leader at a
// chosen moment, so this runs on the mock only: the fault is in the client.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Kafka, logLevel, type Message, type Producer } from "kafkajs";
import { sendPerPartition } from "../../../scripts/chaos/producer.js";
import { type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";
import { ClusterView } from "../../helpers/partition-data.js";

const records = (partition: number, n: number): Message[] =>
  Array.from({ length: n }, (_, i) => ({ partition, value: Buffer.from([partition, i]) }));

describe("the chaos producer (scripts/chaos/producer.ts)", () => {
  let mock: MockKafka;
  let producer: Producer;

  before(async () => {
    mock = await startMockKafka({ brokers: 3 });
    producer = new Kafka({ brokers: mock.bootstrapServers, logLevel: logLevel.NOTHING }).producer();
    await producer.connect();
  });

  after(async () => {
    await producer.disconnect();
    await mock.stop();
  });

  it("sends every partition's records when a leader moved to a broker that answered", async () => {
    // Prepare: partition 0 led by broker 1, partition 1 by broker 2, both known to the producer.
    const topic = `chaos-producer-${Date.now()}`;
    await mock.createTopic(topic, 2, 3);
    await mock.setLeader(topic, 0, 1);
    await mock.setLeader(topic, 1, 2);
    await sendPerPartition(producer, topic, [records(0, 1), records(1, 1)], () => {});
    // The producer's metadata still names broker 1 for partition 0.
    await mock.setLeader(topic, 0, 2);

    // Act
    await sendPerPartition(producer, topic, [records(0, 10), records(1, 10)], () => {});

    // Assess: both partitions hold all 11 (a combined send leaves partition 0 at 1).
    const view = new ClusterView(mock.bootstrapServers, "chaos-producer-test");
    try {
      const counts = [];
      for (const partition of [0, 1]) counts.push((await view.read({ topic, partition })).length);
      assert.deepEqual(counts, [11, 11]);
    } finally {
      await view.close();
    }
  });
});
