/**
 * A fetch at any offset of a log of many small batches answers from that offset: the first record,
 * mid-batch, the last of a batch and the next one's first, the last record, the log's end, and after
 * the log's start moved (DeleteRecords). kcat (librdkafka's consumer) reads; on the mock this pins
 * testbed/mock-kafka/patch-msgset-find.pl, which finds the batch holding a fetch's offset from the
 * nearer end of the log (upstream walks from its start), and on real Kafka (KAFKA_TESTBED=real) the
 * answers it must give. Upstream's mock gives the same answers, only slower: this is the patch's
 * correctness test, not evidence of a difference.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, describe, it } from "node:test";
import { startTestKafka, type TestKafka } from "../../helpers/kafka-testbed.js";
import { kcatProduce, kcatRead } from "../../helpers/kcat.js";

/** Writes of 1, 2, 3, 1, 2, 3, ... records, each its own kcat process and so its own batch. */
const WRITES = 30;

describe("a fetch at any offset of a log of small batches (patch-msgset-find.pl)", () => {
  const started: TestKafka[] = [];
  after(async () => {
    for (const kafka of started) await kafka.stop();
  });

  it("answers from that offset, in both halves of the log and after its start moved", async () => {
    // Prepare: offset i holds key k<i> (one writer, no transactions, a new topic).
    const kafka = await startTestKafka({ brokers: 1 });
    started.push(kafka);
    const topic = `msgset-find-${randomUUID()}`;
    await kafka.createTopic(topic, 1, 1);
    const batchStarts: number[] = [];
    let end = 0;
    for (let write = 0; write < WRITES; write++) {
      const count = (write % 3) + 1;
      batchStarts.push(end);
      const records = Array.from({ length: count }, (_, i) => ({
        key: Buffer.from(`k${end + i}`),
        value: Buffer.from(`v${end + i}`),
      }));
      await kcatProduce({ brokers: kafka.bootstrapServers, topic, partition: 0, records });
      end += count;
    }
    const readFrom = (fromOffset: number) =>
      kcatRead({ brokers: kafka.bootstrapServers, topic, partition: 0, fromOffset });
    const assertReadsFrom = async (offset: number, logEnd: number): Promise<void> => {
      const records = await readFrom(offset);
      assert.deepEqual(
        records.map((r) => [r.offset, r.key?.toString()]),
        Array.from({ length: logEnd - offset }, (_, i) => [offset + i, `k${offset + i}`]),
        `read from offset ${offset}`,
      );
    };
    const lastBatches = batchStarts.slice(-4).flatMap((start) => [start - 1, start, start + 1]);
    const offsets = [0, 1, 2, 3, Math.floor(end / 2) - 1, Math.floor(end / 2), ...lastBatches, end - 1, end];

    // Act + Assess: the whole log.
    for (const offset of offsets) await assertReadsFrom(offset, end);

    // Act: the log's start moves into the middle of a batch of the first half.
    const logStart = (batchStarts[5] as number) + 1;
    await kafka.deleteRecords(topic, 0, logStart);

    // Assess
    for (const offset of [logStart, logStart + 1, Math.floor((logStart + end) / 2), ...lastBatches, end]) {
      await assertReadsFrom(offset, end);
    }
  });
});
