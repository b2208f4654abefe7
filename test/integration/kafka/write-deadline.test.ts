// Our writer against a slowed mock broker: every write is bounded by its deadline, and a produce
// request that landed but whose answer came too late is resent as it was, so the broker drops the
// duplicate.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import type { MirrorRecord, TopicPartition } from "../../../lib/core/model.js";
import { isReplicatorError } from "../../../lib/errors.js";
import { KafkaClusterAdmin } from "../../../lib/kafka/admin/cluster-admin.js";
import {
  KafkaPartitionWriter,
  type KafkaPartitionWriterOptions,
} from "../../../lib/kafka/produce/target-writer.js";
import { KafkaPartitionReader } from "../../../lib/kafka/read/source-reader.js";
import { CapturingLogger } from "../../helpers/fake-observability.js";
import { ApiKey, type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";

const LIMITS = { maxRecords: 10_000, maxBytes: 1024 * 1024, maxWaitMs: 0 };
const REQUEST_TIMEOUT_MS = 1000;
/** The only broker, so it leads every partition. */
const BROKER = 1;

function record(i: number): MirrorRecord {
  return {
    offset: 1000 + i,
    timestamp: 1_700_000_000_000 + i,
    key: Buffer.from([0xff, 0x00, i & 0xff]),
    value: Buffer.from(`value-${i}`),
    headers: [{ key: Buffer.from("h"), value: Buffer.from([i & 0xff]) }],
  };
}

const values = (records: readonly MirrorRecord[]) => records.map((r) => r.value?.toString("hex") ?? null);

describe("target writer: deadlines and resends against a slowed broker", () => {
  let kafka: MockKafka;
  let reader: KafkaPartitionReader;
  let admin: KafkaClusterAdmin;
  const common = () => ({
    brokers: kafka.bootstrapServers,
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    connectionTimeoutMs: 2000,
  });

  before(async () => {
    kafka = await startMockKafka({ brokers: 1 });
    reader = new KafkaPartitionReader({ ...common(), requestTimeoutMs: 5000 });
    admin = new KafkaClusterAdmin({ ...common(), requestTimeoutMs: 5000 });
  });

  after(async () => {
    await Promise.allSettled([reader?.close(), admin?.close()]);
    await kafka?.stop();
  });

  /** A fresh topic (partition 0 under test) and a writer for it, warmed up (producer id, metadata) before `use`. */
  async function withTopic<T>(
    options: Omit<KafkaPartitionWriterOptions, "brokers">,
    use: (writer: KafkaPartitionWriter, tp: TopicPartition, logger: CapturingLogger) => Promise<T>,
  ): Promise<T> {
    const tp = { topic: `test-topic-${randomUUID()}`, partition: 0 };
    await kafka.createTopic(tp.topic, 2, 1);
    const logger = new CapturingLogger();
    const writer = new KafkaPartitionWriter({ ...common(), retryBackoffMs: 20, logger, ...options });
    try {
      // Warm-up at full speed: InitProducerId and metadata are not what these tests time.
      await writer.write({ ...tp, partition: 1 }, [record(0)]);
      return await use(writer, tp, logger);
    } finally {
      await kafka.setRtt(BROKER, 0);
      await kafka.clearRequestErrors(ApiKey.Produce);
      await writer.close();
    }
  }

  async function targetRecords(tp: TopicPartition): Promise<MirrorRecord[]> {
    const end = (await admin.listOffsets(tp.topic, [tp.partition]))[0]?.logEndOffset ?? 0;
    const records: MirrorRecord[] = [];
    for (let offset = 0; offset < end; ) {
      const fetched = await reader.fetch(tp, offset, LIMITS);
      records.push(...fetched.records);
      offset = fetched.nextOffset;
    }
    return records;
  }

  /** When produce requests for `tp` went out (the writer's debug log), in order. */
  const sentAt = (logger: CapturingLogger, tp: TopicPartition) =>
    logger
      .at("debug")
      .flatMap((e) =>
        e.message === "produce sent" && e.fields.partition === tp.partition ? [e.fields.at as number] : [],
      );

  it("stops a write too long for its deadline at a group boundary and resolves with the landed prefix", async () => {
    // 10 batches of 10 records, two in flight: five groups of ~300 ms each against a deadline
    // 1.7 s away, so the fourth group would still be outstanding at the deadline.
    const records = Array.from({ length: 100 }, (_, i) => record(i));
    await withTopic({ maxBatchRecords: 10, maxInFlightBatches: 2 }, async (writer, tp, logger) => {
      await kafka.setRtt(BROKER, 300);
      const deadline = Date.now() + 1700;

      const result = await writer.write(tp, records, null, () => deadline);
      const resolvedAt = Date.now();
      await kafka.setRtt(BROKER, 0);
      // Anything still in the network would land by now.
      await new Promise((resolve) => setTimeout(resolve, 500));

      assert.equal(result.records, 100);
      assert.ok(result.acknowledged > 0 && result.acknowledged < 100, `acknowledged ${result.acknowledged}`);
      assert.equal(result.acknowledged % 20, 0, "cut at a group boundary");
      assert.equal(result.baseOffset, 0);
      assert.ok(resolvedAt <= deadline, `resolved ${resolvedAt - deadline} ms after the deadline`);
      const sent = sentAt(logger, tp);
      assert.equal(sent.length, result.acknowledged / 20);
      for (const at of sent)
        assert.ok(at <= deadline - REQUEST_TIMEOUT_MS, `sent ${at - deadline} ms before it`);
      assert.deepEqual(values(await targetRecords(tp)), values(records.slice(0, result.acknowledged)));
    });
  });

  it("lets a deadline that moves on during the write (a lease renewal) carry the write to its end", async () => {
    const records = Array.from({ length: 100 }, (_, i) => record(i));
    await withTopic({ maxBatchRecords: 10, maxInFlightBatches: 2 }, async (writer, tp) => {
      await kafka.setRtt(BROKER, 300);
      let deadline = Date.now() + 1700;
      const renewal = setTimeout(() => {
        deadline += 5000;
      }, 500);

      const result = await writer.write(tp, records, null, () => deadline);
      clearTimeout(renewal);

      assert.equal(result.acknowledged, 100);
      assert.deepEqual(values(await targetRecords(tp)), values(records));
    });
  });

  it("resends a request that landed but was answered after the timeout with its sequence: each record once", async () => {
    // Two pipelined batches; both land at once but the answers come after the timeout (the mock
    // answers in order, so the second waits behind the first), as acks=all produce requests do
    // when followers are slow. Two, not more: the test bed drops only a resent run of at most two
    // (TESTING.md).
    const records = Array.from({ length: 20 }, (_, i) => record(i));
    await withTopic(
      { maxBatchRecords: 10, retryDeadlineMs: REQUEST_TIMEOUT_MS },
      async (writer, tp, logger) => {
        await kafka.pushBrokerRequestErrors(BROKER, ApiKey.Produce, [{ code: 0, rttMs: 1500 }]);

        const result = await writer.write(tp, records, null, () => Date.now() + 10_000);

        assert.equal(result.acknowledged, 20);
        assert.ok(sentAt(logger, tp).length > 1, "the timed-out batches were sent again");
        assert.deepEqual(values(await targetRecords(tp)), values(records));
      },
    );
  });

  it("ends a write uncertain when the producer session is gone at the resend", async () => {
    const records = Array.from({ length: 5 }, (_, i) => record(i));
    await withTopic({}, async (writer, tp) => {
      await kafka.pushBrokerRequestErrors(BROKER, ApiKey.Produce, [
        { code: 0, rttMs: 1500 },
        { code: 59, rttMs: 0 },
      ]);

      await assert.rejects(
        writer.write(tp, records, null, () => Date.now() + 10_000),
        (error) => {
          assert.ok(isReplicatorError(error, "PRODUCER_STATE_LOST"), String(error));
          assert.equal(error.details.kafkaError, "UNKNOWN_PRODUCER_ID");
          return true;
        },
      );

      // The first attempt landed; nothing was written twice, and the next write starts clean.
      assert.deepEqual(values(await targetRecords(tp)), values(records));
      const next = await writer.write(tp, [record(5)]);
      assert.equal(next.acknowledged, 1);
      assert.equal((await targetRecords(tp)).length, 6);
    });
  });

  it("ends a write uncertain when the deadline leaves no time to resend a request of unknown outcome", async () => {
    const records = Array.from({ length: 5 }, (_, i) => record(i));
    await withTopic({}, async (writer, tp) => {
      await kafka.pushBrokerRequestErrors(BROKER, ApiKey.Produce, [{ code: 0, rttMs: 1500 }]);
      const deadline = Date.now() + 1500;

      await assert.rejects(
        writer.write(tp, records, null, () => deadline),
        (error) => {
          assert.ok(isReplicatorError(error, "KAFKA_RETRIABLE"), String(error));
          assert.match(error.message, /outcome unknown/);
          return true;
        },
      );

      assert.deepEqual(values(await targetRecords(tp)), values(records));
    });
  });
});
