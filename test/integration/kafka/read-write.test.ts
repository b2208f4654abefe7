// Our writer and reader against librdkafka's mock cluster: bytes, headers, offsets and the error
// paths the mock can inject.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import type { MirrorRecord } from "../../../lib/core/model.js";
import type { SourceReader } from "../../../lib/core/ports.js";
import { isReplicatorError } from "../../../lib/errors.js";
import { KafkaClusterAdmin } from "../../../lib/kafka/admin/cluster-admin.js";
import {
  KafkaPartitionWriter,
  type KafkaPartitionWriterOptions,
} from "../../../lib/kafka/produce/target-writer.js";
import { KafkaPartitionReader } from "../../../lib/kafka/read/source-reader.js";
import { ApiKey, type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";
import { retryingReader } from "../../helpers/retrying-reader.js";

const LIMITS = { maxRecords: 10_000, maxBytes: 1024 * 1024, maxWaitMs: 100 };

function topicName(): string {
  return `test-topic-${randomUUID()}`;
}

function record(i: number, extra: Partial<MirrorRecord> = {}): MirrorRecord {
  return {
    offset: 1000 + i,
    timestamp: 1_700_000_000_000 + i,
    key: Buffer.from([0xff, 0x00, i & 0xff]),
    value: Buffer.from(`value-${i}`),
    headers: [
      { key: Buffer.from("h"), value: Buffer.from([i & 0xff]) },
      { key: Buffer.from("x"), value: null },
      { key: Buffer.from("h"), value: Buffer.from([0xfe]) },
    ],
    ...extra,
  };
}

/** Compares what was read with what was written; offsets differ (source vs target). */
function assertSameContent(read: readonly MirrorRecord[], written: readonly MirrorRecord[]): void {
  assert.deepEqual(
    read.map(({ offset: _o, ...rest }) => rest),
    written.map(({ offset: _o, ...rest }) => rest),
  );
}

async function readAll(reader: SourceReader, topic: string, partition: number, from: number, until: number) {
  const records: MirrorRecord[] = [];
  let offset = from;
  while (offset < until) {
    const fetched = await reader.fetch({ topic, partition }, offset, LIMITS);
    records.push(...fetched.records);
    assert.ok(fetched.nextOffset > offset || fetched.records.length === 0);
    if (fetched.nextOffset === offset) break;
    offset = fetched.nextOffset;
  }
  return records;
}

describe("kafka adapter against the mock cluster", () => {
  let kafka: MockKafka;
  let reader: SourceReader;
  let writer: KafkaPartitionWriter;
  let admin: KafkaClusterAdmin;

  before(async () => {
    kafka = await startMockKafka({ brokers: 3 });
    const common = { brokers: kafka.bootstrapServers, requestTimeoutMs: 5000, connectionTimeoutMs: 2000 };
    // Retried as the pump retries it: the reader itself makes one attempt per call.
    reader = retryingReader(new KafkaPartitionReader(common));
    writer = new KafkaPartitionWriter({ ...common, retryBackoffMs: 50, retryDeadlineMs: 15_000 });
    admin = new KafkaClusterAdmin(common);
  });

  after(async () => {
    await Promise.allSettled([reader?.close(), writer?.close(), admin?.close()]);
    await kafka?.stop();
  });

  it("reads back exactly what was written: bytes, nulls, repeated headers, timestamps, order, offsets", async () => {
    const topic = topicName();
    await kafka.createTopic(topic, 2, 1);
    const records = [
      ...Array.from({ length: 20 }, (_, i) => record(i)),
      record(20, { key: null, value: null, headers: [] }),
      record(21, { value: Buffer.alloc(0), key: Buffer.alloc(0) }),
    ];

    const result = await writer.write({ topic, partition: 1 }, records);
    const fetched = await reader.fetch({ topic, partition: 1 }, 0, LIMITS);

    assert.equal(result.baseOffset, 0);
    assert.equal(result.records, records.length);
    assertSameContent(fetched.records, records);
    assert.deepEqual(
      fetched.records.map((r) => r.offset),
      records.map((_, i) => i),
    );
    assert.equal(fetched.nextOffset, records.length);
    assert.equal(fetched.highWatermark, records.length);
  });

  it("drops records below a requested offset inside a batch", async () => {
    const topic = topicName();
    await kafka.createTopic(topic, 1, 1);
    const records = Array.from({ length: 10 }, (_, i) => record(i));
    await writer.write({ topic, partition: 0 }, records);

    const fetched = await reader.fetch({ topic, partition: 0 }, 4, LIMITS);

    assert.deepEqual(
      fetched.records.map((r) => r.offset),
      [4, 5, 6, 7, 8, 9],
    );
    assertSameContent(fetched.records, records.slice(4));
    assert.equal(fetched.nextOffset, 10);
  });

  it("cuts at maxRecords and resumes from the first record not returned", async () => {
    const topic = topicName();
    await kafka.createTopic(topic, 1, 1);
    const records = Array.from({ length: 10 }, (_, i) => record(i));
    await writer.write({ topic, partition: 0 }, records);

    const first = await reader.fetch({ topic, partition: 0 }, 2, { ...LIMITS, maxRecords: 3 });
    const rest = await reader.fetch({ topic, partition: 0 }, first.nextOffset, LIMITS);

    assert.deepEqual(
      first.records.map((r) => r.offset),
      [2, 3, 4],
    );
    assert.equal(first.nextOffset, 5);
    assert.deepEqual(
      rest.records.map((r) => r.offset),
      [5, 6, 7, 8, 9],
    );
  });

  /** A writer of its own for one test (small batches, other limits), closed when `use` ends. */
  async function withWriter<T>(
    options: Omit<KafkaPartitionWriterOptions, "brokers">,
    use: (writer: KafkaPartitionWriter) => Promise<T>,
  ): Promise<T> {
    const own = new KafkaPartitionWriter({ brokers: kafka.bootstrapServers, ...options });
    try {
      return await use(own);
    } finally {
      await own.close();
    }
  }

  it("reads across many batches written in several writes", async () => {
    const topic = topicName();
    await kafka.createTopic(topic, 1, 1);
    const records = Array.from({ length: 50 }, (_, i) => record(i));
    await withWriter({ maxBatchRecords: 7, compression: "gzip" }, async (small) => {
      await small.write({ topic, partition: 0 }, records.slice(0, 30));
      await small.write({ topic, partition: 0 }, records.slice(30));
    });

    const read = await readAll(reader, topic, 0, 0, 50);

    assertSameContent(read, records);
  });

  it("fills one fetch from several batches although the mock answers one batch per request", async () => {
    const topic = topicName();
    await kafka.createTopic(topic, 1, 1);
    const records = Array.from({ length: 50 }, (_, i) => record(i));
    await withWriter({ maxBatchRecords: 7 }, (small) => small.write({ topic, partition: 0 }, records));

    const all = await reader.fetch({ topic, partition: 0 }, 0, LIMITS);
    const capped = await reader.fetch({ topic, partition: 0 }, 3, { ...LIMITS, maxRecords: 20 });

    assertSameContent(all.records, records);
    assert.equal(all.nextOffset, 50);
    assert.deepEqual(
      capped.records.map((r) => r.offset),
      Array.from({ length: 20 }, (_, i) => i + 3),
    );
    assert.equal(capped.nextOffset, 23);
  });

  it("returns nothing and the same offset when caught up", async () => {
    const topic = topicName();
    await kafka.createTopic(topic, 1, 1);
    await writer.write({ topic, partition: 0 }, [record(0)]);

    const fetched = await reader.fetch({ topic, partition: 0 }, 1, LIMITS);

    assert.deepEqual(fetched.records, []);
    assert.equal(fetched.nextOffset, 1);
  });

  it("coalesces concurrent fetches of partitions on one broker and answers each", async () => {
    const topic = topicName();
    await kafka.createTopic(topic, 6, 1);
    for (let p = 0; p < 6; p++) await writer.write({ topic, partition: p }, [record(p)]);

    const results = await Promise.all(
      Array.from({ length: 6 }, (_, p) => reader.fetch({ topic, partition: p }, 0, LIMITS)),
    );

    results.forEach((r, p) => {
      assertSameContent(r.records, [record(p)]);
    });
  });

  it("throws OFFSET_OUT_OF_RANGE with the log range for an offset past the end", async () => {
    const topic = topicName();
    await kafka.createTopic(topic, 1, 1);
    await writer.write({ topic, partition: 0 }, [record(0), record(1)]);

    await assert.rejects(reader.fetch({ topic, partition: 0 }, 50, LIMITS), (error) => {
      assert.ok(isReplicatorError(error, "OFFSET_OUT_OF_RANGE"), String(error));
      assert.equal(error.details.logStartOffset, 0);
      assert.equal(error.details.highWatermark, 2);
      return true;
    });
  });

  it("resends after injected retriable produce errors without duplicates", async () => {
    const topic = topicName();
    await kafka.createTopic(topic, 1, 1);
    await kafka.pushRequestErrors(ApiKey.Produce, [6, 7, 19]);
    const records = Array.from({ length: 5 }, (_, i) => record(i));

    await writer.write({ topic, partition: 0 }, records);
    const read = await readAll(reader, topic, 0, 0, 5);

    assertSameContent(read, records);
    assert.deepEqual((await admin.listOffsets(topic, [0]))[0], {
      partition: 0,
      logStartOffset: 0,
      logEndOffset: 5,
    });
  });

  for (const [failing, codes] of [
    ["a retriable error", [0, 6]],
    ["a request timeout", [0, 0, 7]],
    ["a refused batch", [0, 0, 0, 10]],
  ] as const) {
    it(`keeps a pipelined write in order when one of its requests meets ${failing}`, async () => {
      const topic = topicName();
      await kafka.createTopic(topic, 1, 1);
      // 7 batches: a pipeline of five, then of two. The injected error hits one request in the
      // first; the test bed refuses the requests behind it as out of sequence, as Kafka does.
      const records = Array.from({ length: 70 }, (_, i) => record(i));
      await kafka.pushRequestErrors(ApiKey.Produce, codes);
      const result = await withWriter({ maxBatchRecords: 10, retryBackoffMs: 20 }, (small) =>
        small.write({ topic, partition: 0 }, records),
      );

      assert.equal(result.baseOffset, 0);

      assertSameContent(await readAll(reader, topic, 0, 0, 70), records);
      assert.equal((await admin.listOffsets(topic, [0]))[0]?.logEndOffset, 70);
    });
  }

  it("with maxInFlightBatches 1 lands a write in order through a failed batch; more than five is refused", async () => {
    const topic = topicName();
    await kafka.createTopic(topic, 1, 1);
    const records = Array.from({ length: 30 }, (_, i) => record(i));
    // With one batch in flight the error hits the second batch alone, which is simply resent.
    await kafka.pushRequestErrors(ApiKey.Produce, [0, 6]);
    await withWriter({ maxBatchRecords: 10, maxInFlightBatches: 1 }, (single) =>
      single.write({ topic, partition: 0 }, records),
    );

    assertSameContent(await readAll(reader, topic, 0, 0, 30), records);
    assert.throws(
      () => new KafkaPartitionWriter({ brokers: kafka.bootstrapServers, maxInFlightBatches: 6 }),
      /maxInFlightBatches must be an integer from 1 to 5, got 6/,
    );
  });

  it("retries fetches after injected retriable fetch errors", async () => {
    const topic = topicName();
    await kafka.createTopic(topic, 1, 1);
    await writer.write({ topic, partition: 0 }, [record(0)]);
    await kafka.pushRequestErrors(ApiKey.Fetch, [6, 5]);

    const fetched = await reader.fetch({ topic, partition: 0 }, 0, LIMITS);

    assertSameContent(fetched.records, [record(0)]);
  });

  it("rejects a single record the target refuses as too large, naming its source offset", async () => {
    const topic = topicName();
    await kafka.createTopic(topic, 1, 1);
    await kafka.pushRequestErrors(ApiKey.Produce, [10]);

    await assert.rejects(writer.write({ topic, partition: 0 }, [record(7)]), (error) => {
      assert.ok(isReplicatorError(error, "RECORD_REJECTED"), String(error));
      assert.deepEqual(
        {
          topic: error.details.topic,
          partition: error.details.partition,
          sourceOffset: error.details.sourceOffset,
        },
        { topic, partition: 0, sourceOffset: 1007 },
      );
      return true;
    });
    const offsets = await admin.listOffsets(topic, [0]);
    assert.equal(offsets[0]?.logEndOffset, 0);
  });

  it("splits a multi-record batch refused as too large and writes every record once", async () => {
    const topic = topicName();
    await kafka.createTopic(topic, 1, 1);
    await kafka.pushRequestErrors(ApiKey.Produce, [10]);
    const records = Array.from({ length: 6 }, (_, i) => record(i));

    await writer.write({ topic, partition: 0 }, records);

    assertSameContent(await readAll(reader, topic, 0, 0, 6), records);
  });

  it("follows a leader move during writes and reads", async () => {
    const topic = topicName();
    await kafka.createTopic(topic, 1, 3);
    await kafka.setLeader(topic, 0, 1);
    await writer.write({ topic, partition: 0 }, [record(0)]);
    await reader.fetch({ topic, partition: 0 }, 0, LIMITS);

    await kafka.setLeader(topic, 0, 2);
    await writer.write({ topic, partition: 0 }, [record(1)]);
    await kafka.setLeader(topic, 0, 3);
    const read = await readAll(reader, topic, 0, 0, 2);

    assertSameContent(read, [record(0), record(1)]);
  });

  it("re-routes one call once after the leader moved: a bare reader and the admin follow at once", async () => {
    // Prepare: a reader without the pump's retries, its metadata naming broker 1 as the leader.
    const topic = topicName();
    await kafka.createTopic(topic, 1, 3);
    await kafka.setLeader(topic, 0, 1);
    await writer.write({ topic, partition: 0 }, [record(0)]);
    const bare = new KafkaPartitionReader({ brokers: kafka.bootstrapServers, requestTimeoutMs: 5000 });
    try {
      await bare.fetch({ topic, partition: 0 }, 0, LIMITS);
      await admin.listOffsets(topic, [0]);

      // Act: broker 1 now answers NOT_LEADER_OR_FOLLOWER for the partition.
      await kafka.setLeader(topic, 0, 2);
      const fetched = await bare.fetch({ topic, partition: 0 }, 0, LIMITS);
      const offsets = await admin.listOffsets(topic, [0]);

      // Assess
      assertSameContent(fetched.records, [record(0)]);
      assert.equal(offsets[0]?.logEndOffset, 1);
    } finally {
      await bare.close();
    }
  });

  it("rides out its partition leader going down and up", async () => {
    const topic = topicName();
    await kafka.createTopic(topic, 1, 3);
    await kafka.setLeader(topic, 0, 2);
    await writer.write({ topic, partition: 0 }, [record(0)]);
    await reader.fetch({ topic, partition: 0 }, 0, LIMITS);

    await kafka.brokerDown(2);
    const both = Promise.all([
      writer.write({ topic, partition: 0 }, [record(1)]),
      reader.fetch({ topic, partition: 0 }, 1, { ...LIMITS, maxWaitMs: 500 }),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await kafka.brokerUp(2);
    await both;
    const read = await readAll(reader, topic, 0, 0, 2);

    assertSameContent(read, [record(0), record(1)]);
  });

  it("reports lost producer state for the partition and starts clean on the next write", async () => {
    const topic = topicName();
    await kafka.createTopic(topic, 1, 1);
    await writer.write({ topic, partition: 0 }, [record(0)]);
    await kafka.pushRequestErrors(ApiKey.Produce, [45]);

    await assert.rejects(writer.write({ topic, partition: 0 }, [record(1)]), (error) => {
      assert.ok(isReplicatorError(error, "PRODUCER_STATE_LOST"), String(error));
      assert.equal(error.details.kafkaError, "OUT_OF_ORDER_SEQUENCE_NUMBER");
      return true;
    });
    await writer.write({ topic, partition: 0 }, [record(1)]);

    assertSameContent(await readAll(reader, topic, 0, 0, 2), [record(0), record(1)]);
  });

  it("gives KAFKA_RETRIABLE with the kafkajs cause when no broker can be reached", async () => {
    const unreachable = new KafkaPartitionReader({
      brokers: ["127.0.0.1:1"],
      connectionTimeoutMs: 500,
    });
    try {
      await assert.rejects(unreachable.fetch({ topic: "t", partition: 0 }, 0, LIMITS), (error) => {
        assert.ok(isReplicatorError(error, "KAFKA_RETRIABLE"), String(error));
        assert.ok(error.cause instanceof Error);
        return true;
      });
    } finally {
      await unreachable.close();
    }
  });

  it("creates topics with the requested partitions and tolerates existing ones", async () => {
    const a = topicName();
    const b = topicName();

    await admin.createTopics([
      { name: a, partitions: 3, replicationFactor: 1 },
      { name: b, partitions: 5, replicationFactor: 1 },
    ]);
    await admin.createTopics([{ name: a, partitions: 3, replicationFactor: 1 }]);
    const topics = await admin.listTopics();

    assert.equal(topics.find((t) => t.name === a)?.partitions, 3);
    assert.equal(topics.find((t) => t.name === b)?.partitions, 5);
  });

  it("lists earliest and latest offsets after N records", async () => {
    const topic = topicName();
    await kafka.createTopic(topic, 2, 1);
    await writer.write(
      { topic, partition: 1 },
      Array.from({ length: 13 }, (_, i) => record(i)),
    );

    const offsets = await admin.listOffsets(topic, [0, 1]);

    assert.deepEqual(offsets, [
      { partition: 0, logStartOffset: 0, logEndOffset: 0 },
      { partition: 1, logStartOffset: 0, logEndOffset: 13 },
    ]);
  });
});
