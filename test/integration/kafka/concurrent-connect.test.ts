// Regression: "fetch .../6@0 failed: Error: Broker not connected" (KAFKA_FATAL) when several
// workers started fetching through one fresh reader. kafkajs reports the cluster connected while
// the seed broker's ApiVersions request is still in flight; a fetch that started then skipped the
// pending connect and sent Metadata through a broker kafkajs had not finished setting up.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { KafkaPartitionReader } from "../../../lib/kafka/read/source-reader.js";
import { type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";

const LIMITS = { maxRecords: 10, maxBytes: 1024 * 1024, maxWaitMs: 10 };
const PARTITIONS = 8;
/** Long enough that later fetches start while the first connect's ApiVersions is in flight. */
const RTT_MS = 300;

describe("KafkaPartitionReader on a fresh connection", () => {
  let kafka: MockKafka;
  let topic: string;

  before(async () => {
    kafka = await startMockKafka({ brokers: 3 });
    topic = `test-topic-${randomUUID()}`;
    await kafka.createTopic(topic, PARTITIONS);
    for (const id of [1, 2, 3]) await kafka.setRtt(id, RTT_MS);
  });

  after(async () => {
    await kafka?.stop();
  });

  // maxAttempts 1: each fetch must succeed at once; a retry must not be what hides the race.
  function freshReader(): KafkaPartitionReader {
    return new KafkaPartitionReader({
      brokers: kafka.bootstrapServers,
      requestTimeoutMs: 5000,
      connectionTimeoutMs: 2000,
    });
  }

  it("waits for a connect already in flight instead of failing with 'Broker not connected'", async () => {
    const reader = freshReader();
    try {
      const first = reader.fetch({ topic, partition: 0 }, 0, LIMITS);
      await delay(RTT_MS / 3);
      const later = Array.from({ length: PARTITIONS - 1 }, (_, i) =>
        reader.fetch({ topic, partition: i + 1 }, 0, LIMITS),
      );

      const results = await Promise.allSettled([first, ...later]);

      assert.deepEqual(
        results.map((r) => (r.status === "rejected" ? String(r.reason) : "ok")),
        Array.from({ length: PARTITIONS }, () => "ok"),
      );
    } finally {
      await reader.close();
    }
  });

  it("serves many fetches started in the same turn on a fresh reader", async () => {
    const reader = freshReader();
    try {
      const results = await Promise.allSettled(
        Array.from({ length: PARTITIONS }, (_, partition) => reader.fetch({ topic, partition }, 0, LIMITS)),
      );

      assert.deepEqual(
        results.map((r) => (r.status === "rejected" ? String(r.reason) : "ok")),
        Array.from({ length: PARTITIONS }, () => "ok"),
      );
    } finally {
      await reader.close();
    }
  });
});
