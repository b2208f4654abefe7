// Smoke test of the local Kafka test bed: librdkafka's mock cluster behind our launcher, driven
// by kafkajs (admin, CreateTopics through our handler) and by kcat as an independent producer.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { type Admin, type ITopicConfig, Kafka, logLevel } from "kafkajs";
import { type KcatCompression, kcatBatchCodecs, kcatProduce, kcatRead } from "../../helpers/kcat.js";
import { ApiKey, type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("mock Kafka test bed", () => {
  let kafka: MockKafka;
  let admin: Admin;

  before(async () => {
    kafka = await startMockKafka({ brokers: 3 });
    admin = new Kafka({
      clientId: "testbed-smoke",
      brokers: kafka.bootstrapServers,
      logLevel: logLevel.NOTHING,
    }).admin();
    await admin.connect();
  });

  after(async () => {
    await admin.disconnect();
    await kafka.stop();
  });

  it("advertises three brokers with a real controller", async () => {
    // Prepare
    const topic = `smoke-${randomUUID()}`;
    await kafka.createTopic(topic, 2);

    // Act
    const cluster = await admin.describeCluster();
    const metadata = await admin.fetchTopicMetadata({ topics: [topic] });

    // Assess
    assert.equal(kafka.bootstrapServers.length, 3);
    assert.deepEqual(cluster.brokers.map((b) => b.nodeId).sort(), [1, 2, 3]);
    assert.equal(cluster.controller, 1);
    assert.equal(metadata.topics[0]?.partitions.length, 2);
  });

  it("creates topics through kafkajs admin.createTopics", async () => {
    const topic = `created-${randomUUID()}`;

    const first = await admin.createTopics({ topics: [{ topic, numPartitions: 8 }] });
    const second = await admin.createTopics({ topics: [{ topic, numPartitions: 8 }] });

    assert.equal(first, true);
    assert.equal(second, false, "kafkajs reports an existing topic as false");
    const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
    const partitions = metadata.topics[0]?.partitions ?? [];
    assert.equal(partitions.length, 8);
    assert.ok(partitions.every((p) => p.replicas.length === 3));
  });

  it("refuses invalid partition and replication counts like Kafka", async () => {
    const typeOf = async (config: ITopicConfig): Promise<string | undefined> => {
      try {
        await admin.createTopics({ topics: [config] });
        return undefined;
      } catch (error) {
        // kafkajs wraps per-topic failures in an aggregate whose errors carry the Kafka type.
        return (error as { errors?: { type?: string }[] }).errors?.[0]?.type;
      }
    };

    assert.equal(await typeOf({ topic: `bad-${randomUUID()}`, numPartitions: 0 }), "INVALID_PARTITIONS");
    assert.equal(
      await typeOf({ topic: `bad-${randomUUID()}`, numPartitions: 1, replicationFactor: 4 }),
      "INVALID_REPLICATION_FACTOR",
    );
  });

  it("answers fault-injection commands and rejects bad ones", async () => {
    const topic = `faults-${randomUUID()}`;
    await kafka.createTopic(topic, 3, 3);

    await kafka.brokerDown(2);
    await kafka.brokerUp(2);
    await kafka.setLeader(topic, 0, 3);
    await kafka.setRtt(1, 0);
    await kafka.pushRequestErrors(ApiKey.Produce, [6]);
    await kafka.clearRequestErrors(ApiKey.Produce);
    // An API nothing else here calls, so the queued errors cannot leak into the next tests.
    await kafka.pushBrokerRequestErrors(3, ApiKey.InitProducerId, [
      { code: 6, rttMs: 10 },
      { code: 7, rttMs: 0 },
    ]);

    assert.equal(await kafka.brokerErrorCount(3, ApiKey.InitProducerId), 2);
    const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
    assert.equal(metadata.topics[0]?.partitions.find((p) => p.partitionId === 0)?.leader, 3);
    await assert.rejects(kafka.command("no-such-command"), /unknown command/);
    await assert.rejects(kafka.createTopic(topic, 3), /TOPIC_ALREADY_EXISTS/);
    await assert.rejects(kafka.command("broker-down 99"), /ERR|UNKNOWN|BROKER/i);
  });

  it("stores what kcat writes with each codec, bytes and NULLs intact", async () => {
    const topic = `kcat-${randomUUID()}`;
    const codecs: KcatCompression[] = ["none", "gzip", "snappy", "lz4", "zstd"];
    await kafka.createTopic(topic, codecs.length, 1);
    const records = Array.from({ length: 2000 }, (_, i) => ({
      key: i % 7 === 0 ? null : Buffer.from([i & 0xff, 0x00, 0x0a, (i >> 8) & 0xff]),
      value: i % 11 === 0 ? null : Buffer.alloc(100 + (i % 50), i & 0xff),
    }));

    for (const [partition, compression] of codecs.entries()) {
      await kcatProduce({
        brokers: kafka.bootstrapServers,
        topic,
        partition,
        compression,
        records,
        headers: [["origin", "kcat"]],
        // Batches of many records: librdkafka sends a batch that compression cannot shrink (a
        // lone tiny record, when a loaded machine flushes early) uncompressed.
        config: { "linger.ms": "1000" },
      });
    }

    for (const [partition, compression] of codecs.entries()) {
      const read = await kcatRead({ brokers: kafka.bootstrapServers, topic, partition });
      assert.equal(read.length, records.length, `${compression}: record count`);
      assert.ok(
        read.every((r, i) => {
          const want = records[i];
          return (
            want !== undefined &&
            r.offset === i &&
            (r.key === null ? want.key === null : want.key !== null && r.key.equals(want.key)) &&
            (r.value === null ? want.value === null : want.value !== null && r.value.equals(want.value))
          );
        }),
        `${compression}: records differ`,
      );
      const seen = await kcatBatchCodecs({ brokers: kafka.bootstrapServers, topic, partition });
      assert.deepEqual([...seen], [compression], `${compression}: batch codecs`);
    }
  });

  it("stop() leaves no process behind and is idempotent", async () => {
    const extra = await startMockKafka({ brokers: 1 });
    assert.ok(isRunning(extra.pid));

    await extra.stop();
    await extra.stop();

    assert.equal(isRunning(extra.pid), false);
    await assert.rejects(extra.brokerDown(1), /not running/);
  });
});
