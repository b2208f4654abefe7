// A caught-up partition's long poll holds no other partition's read (lib/kafka/read/fetch-coalescer.ts),
// on the mock or on real Kafka (KAFKA_TESTBED). A broker answers one connection's requests in order:
// with the poll and the read on one connection, the read of a partition full of records waited
// for the poll's whole maxWaitMs (this test failed so, on both brokers, before the poll had a
// connection of its own).
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { KafkaPartitionReader } from "../../../lib/kafka/read/source-reader.js";
import { CapturingLogger } from "../../helpers/fake-observability.js";
import { startTestKafka, type TestKafka } from "../../helpers/kafka-testbed.js";
import { kcatProduce } from "../../helpers/kcat.js";

/** Far longer than any read here takes: a read that waited for a poll shows. */
const MAX_WAIT_MS = 6_000;
const LIMITS = { maxRecords: 10_000, maxBytes: 1 << 20, maxWaitMs: MAX_WAIT_MS };

/** Settles to "pending" unless `promise` settled first. */
const stateOf = (promise: Promise<unknown>) =>
  Promise.race([
    promise.then(
      () => "settled",
      () => "settled",
    ),
    sleep(0).then(() => "pending"),
  ]);

describe("a caught-up partition's long poll", () => {
  let kafka: TestKafka;
  let reader: KafkaPartitionReader;
  const logger = new CapturingLogger();

  before(async () => {
    kafka = await startTestKafka({ brokers: 1 });
    reader = new KafkaPartitionReader({
      brokers: kafka.bootstrapServers,
      requestTimeoutMs: 15_000,
      connectionTimeoutMs: 5_000,
      logger,
    });
  });

  after(async () => {
    await reader?.close();
    await kafka?.stop();
  });

  it("holds no read of another partition of its broker, and wakes when a record arrives", async () => {
    const topic = `held-fetch-${randomUUID()}`;
    await kafka.createTopic(topic, 2, 1);
    const idle = { topic, partition: 0 };
    const busy = { topic, partition: 1 };
    const records = Array.from({ length: 100 }, (_, i) => ({
      key: Buffer.from(`k${i}`),
      value: Buffer.from(`v${i}`),
    }));
    await kcatProduce({ brokers: kafka.bootstrapServers, topic, partition: 1, records });
    // The first answer says where the idle partition ends; the next fetch of it then waits there.
    assert.equal((await reader.fetch(idle, 0, { ...LIMITS, maxWaitMs: 0 })).highWatermark, 0);

    const poll = reader.fetch(idle, 0, LIMITS);
    const polling = performance.now();
    await sleep(300);
    const read = await reader.fetch(busy, 0, LIMITS);
    assert.equal(read.records.length, 100);
    assert.equal(await stateOf(poll), "pending", "the read came back while the poll was held");

    await kcatProduce({ brokers: kafka.bootstrapServers, topic, partition: 0, records: records.slice(0, 1) });
    let woken = await poll;
    // The mock answers a woken poll empty (TESTING.md, "Held fetches"): the record comes with the next.
    if (woken.records.length === 0) woken = await reader.fetch(idle, woken.nextOffset, LIMITS);
    assert.deepEqual(
      woken.records.map((r) => r.key?.toString()),
      ["k0"],
    );
    assert.ok(performance.now() - polling < MAX_WAIT_MS, "the poll was answered when the record arrived");
    // Each fetch went through on its first attempt: the polls' client knew the broker at once.
    assert.deepEqual(
      logger.entries.filter((e) => e.message.includes("re-routing")).map((e) => e.message),
      [],
    );
  });
});
