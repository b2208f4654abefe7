/**
 * A Fetch held for its MaxWait because it found nothing is answered once a record arrives, as
 * Kafka's DelayedFetch completes: kcat (librdkafka's consumer) reads a record written by kcat's
 * producer while its fetch waits, long before that MaxWait ends. On real Kafka (KAFKA_TESTBED=real)
 * this pins what the mock's patch (testbed/mock-kafka/patch-fetch-wakeup.pl) imitates; on the mock,
 * the same measurement without MOCK_KAFKA_FETCH_WAKEUP shows upstream's hold, so the assertion can
 * fail.
 */
import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createInterface } from "node:readline";
import { after, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { KAFKA_TESTBED, mockTestKafka, startTestKafka, type TestKafka } from "../../helpers/kafka-testbed.js";
import { KCAT, kcatProduce } from "../../helpers/kcat.js";
import { startMockKafka } from "../../helpers/mock-kafka.js";

/** The consumer's fetch.wait.max.ms: far longer than a woken fetch takes. */
const MAX_WAIT_MS = 4_000;
/** How long after the consumer's last answer the record is written: its next fetch is held by then. */
const PARKED_MS = 1_000;

/**
 * Milliseconds from the start of a record's write (a kcat process) to kcat's consumer printing it, measured
 * while that consumer's fetch is held: a first record is read, then the partition is quiet for
 * PARKED_MS, then the second is written.
 */
async function arrivalWhileHeld(kafka: TestKafka): Promise<number> {
  const topic = `wakeup-${randomUUID()}`;
  await kafka.createTopic(topic, 1, 1);
  const consumer: ChildProcessWithoutNullStreams = spawn(KCAT, [
    "-C",
    "-q",
    "-u",
    "-b",
    kafka.bootstrapServers.join(","),
    "-t",
    topic,
    "-p",
    "0",
    "-o",
    "beginning",
    "-f",
    "%k\\n",
    "-X",
    `fetch.wait.max.ms=${MAX_WAIT_MS}`,
  ]);
  const arrived = new Map<string, number>();
  const waiting = new Map<string, () => void>();
  createInterface({ input: consumer.stdout }).on("line", (key) => {
    arrived.set(key, performance.now());
    waiting.get(key)?.();
  });
  const read = (key: string): Promise<void> =>
    arrived.has(key) ? Promise.resolve() : new Promise((resolve) => waiting.set(key, resolve));
  const write = (key: string): Promise<void> =>
    kcatProduce({
      brokers: kafka.bootstrapServers,
      topic,
      partition: 0,
      records: [{ key: Buffer.from(key), value: Buffer.from("v") }],
    });
  try {
    await write("first");
    await read("first");
    await sleep(PARKED_MS);
    const writing = performance.now();
    await write("second");
    await read("second");
    return (arrived.get("second") as number) - writing;
  } finally {
    consumer.kill();
  }
}

describe("a held Fetch answered when a record arrives", () => {
  const started: TestKafka[] = [];
  after(async () => {
    for (const kafka of started) await kafka.stop();
  });

  it(`${KAFKA_TESTBED === "real" ? "real Kafka" : "the mock with MOCK_KAFKA_FETCH_WAKEUP=1"} answers before MaxWait ends`, async (t) => {
    // Prepare
    const kafka =
      KAFKA_TESTBED === "real"
        ? await startTestKafka({ brokers: 1 })
        : mockTestKafka(await startMockKafka({ brokers: 1, fetchWakeup: true }));
    started.push(kafka);

    // Act
    const ms = await arrivalWhileHeld(kafka);
    t.diagnostic(`arrived ${Math.round(ms)} ms after it was written`);

    // Assess: the held fetch's MaxWait had MAX_WAIT_MS - PARKED_MS to run.
    assert.ok(ms < (MAX_WAIT_MS - PARKED_MS) / 2, `the record took ${Math.round(ms)} ms`);
  });

  it("upstream's mock (no MOCK_KAFKA_FETCH_WAKEUP) holds the answer for the whole MaxWait", {
    skip: KAFKA_TESTBED === "real",
  }, async (t) => {
    // Prepare
    const kafka = mockTestKafka(await startMockKafka({ brokers: 1, fetchWakeup: false }));
    started.push(kafka);

    // Act
    const ms = await arrivalWhileHeld(kafka);
    t.diagnostic(`arrived ${Math.round(ms)} ms after it was written`);

    // Assess: what the first case would see without the patch.
    assert.ok(ms >= (MAX_WAIT_MS - PARKED_MS) / 2, `the record took ${Math.round(ms)} ms`);
  });
});
