// The transaction around a fenced write (lib/kafka/produce/transactional-write.ts) against the patched
// mock broker, whose answers a test can hold back: EndTxn never outlives the run's deadline, no
// transaction is begun without room for its commit, and a transaction a failed write left open
// is ended (the last stable offset, read with ListOffsets read_committed by a client of the test
// bed's own, catches up with the high watermark). Named after the bug they pin: EndTxn's retries
// were bounded by target.requestTimeoutMs only, so a commit could outlive a Lambda's deadline.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import type { MirrorRecord, TopicPartition } from "../../../lib/core/model.js";
import { isReplicatorError } from "../../../lib/errors.js";
import { KafkaPartitionWriter } from "../../../lib/kafka/produce/target-writer.js";
import { CapturingLogger } from "../../helpers/fake-observability.js";
import { latestOffset } from "../../helpers/kafka-raw-requests.js";
import { ApiKey, type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";

const REQUEST_TIMEOUT_MS = 4_000;
const BROKER = 1;
const MESSAGE_TOO_LARGE = 10;
/** Longer than any test: an answer held back this long never comes in time. */
const NEVER_MS = 30_000;

function record(i: number): MirrorRecord {
  return {
    offset: i,
    timestamp: 1_700_000_000_000 + i,
    key: Buffer.from([0xff, i & 0xff]),
    value: Buffer.from([0xfe, i & 0xff]),
    headers: [],
  };
}
const two = [record(0), record(1)];

describe("transactional write: bounds and open transactions", () => {
  let kafka: MockKafka;

  before(async () => {
    kafka = await startMockKafka({ brokers: 1 });
  });

  after(async () => {
    await kafka?.stop();
  });

  /**
   * A fresh topic and a fenced writer, one record per batch and one batch in flight (so a write of
   * two records is two rounds), warmed up (producer id, coordinator, metadata) before `use`.
   * `retryDeadlineMs`: how long one step (EndTxn among them) is retried. `on`: a cluster of the
   * test's own, for answers held back that no later test must meet (the launcher cannot drop a
   * broker's queue).
   */
  async function withWriter<T>(
    use: (writer: KafkaPartitionWriter, tp: TopicPartition, logger: CapturingLogger) => Promise<T>,
    retryDeadlineMs = REQUEST_TIMEOUT_MS,
    on: MockKafka = kafka,
  ): Promise<T> {
    const tp = { topic: `test-topic-${randomUUID()}`, partition: 0 };
    await on.createTopic(tp.topic, 1, 1);
    const logger = new CapturingLogger();
    const writer = new KafkaPartitionWriter({
      brokers: on.bootstrapServers,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
      retryDeadlineMs,
      retryBackoffMs: 20,
      maxBatchRecords: 1,
      maxInFlightBatches: 1,
      logger,
      transactions: { alias: `alias-${randomUUID().slice(0, 8)}`, transactionTimeoutMs: 60_000 },
    });
    try {
      await writer.write(tp, [record(100)]);
      return await use(writer, tp, logger);
    } finally {
      await writer.close();
    }
  }

  const stable = (tp: TopicPartition) =>
    latestOffset(kafka.bootstrapServers[0] as string, tp.topic, tp.partition, "read_committed");
  const end = (tp: TopicPartition) =>
    latestOffset(kafka.bootstrapServers[0] as string, tp.topic, tp.partition, "read_uncommitted");

  it("gives up an unanswered EndTxn at the run's deadline, with a warning, however long its retries", async (t) => {
    const own = await startMockKafka({ brokers: 1 });
    t.after(() => own.stop());
    await withWriter(
      async (writer, tp, logger) => {
        // Prepare: EndTxn is never answered, and the writer would retry it for 20 s. The lease runs
        // to the run's end, as a run's last lease does.
        await own.pushBrokerRequestErrors(
          BROKER,
          ApiKey.EndTxn,
          Array.from({ length: 8 }, () => ({ code: 0, rttMs: NEVER_MS })),
        );
        const startedAt = Date.now();
        const runDeadline = startedAt + 9_000;

        // Act
        const failure = await writer
          .write(tp, two, null, () => runDeadline, runDeadline)
          .then(
            () => null,
            (error: unknown) => error,
          );

        // Assess: the write's outcome is unknown (the commit may land yet), and it ended in time.
        const tookMs = Date.now() - startedAt;
        assert.ok(isReplicatorError(failure, "KAFKA_RETRIABLE"), String(failure));
        assert.ok(tookMs <= 9_300, `the write ended ${tookMs - 9_000} ms after the run's deadline`);
        assert.equal(logger.at("warn").filter((l) => l.message.startsWith("EndTxn not answered")).length, 1);
      },
      20_000,
      own,
    );
  });

  it("begins no transaction without a request's time left for its commit", async () => {
    await withWriter(async (writer, tp) => {
      const before = await end(tp);
      const runDeadline = Date.now() + REQUEST_TIMEOUT_MS + 500;

      const result = await writer.write(tp, two, null, undefined, runDeadline);

      assert.equal(result.acknowledged, 0);
      assert.equal(await writer.endOpenTransaction(tp, () => Date.now() + 60_000), "none");
      assert.equal(await end(tp), before, "no record, and no marker of an empty transaction");
    });
  });

  it("ends the transaction a refused record left open, so read_committed readers go past it", async () => {
    await withWriter(async (writer, tp) => {
      // Prepare: the first record lands in the write's transaction, the second is refused.
      await kafka.pushBrokerRequestErrors(BROKER, ApiKey.Produce, [
        { code: 0, rttMs: 0 },
        { code: MESSAGE_TOO_LARGE, rttMs: 0 },
      ]);
      await assert.rejects(writer.write(tp, two), { code: "RECORD_REJECTED" });
      const open = await stable(tp);
      assert.ok(open < (await end(tp)), `the transaction holds read_committed readers at ${open}`);

      // Act
      const ended = await writer.endOpenTransaction(tp, () => Date.now() + 60_000);

      // Assess
      assert.equal(ended, "aborted");
      assert.equal(await stable(tp), await end(tp));
      assert.equal(await writer.endOpenTransaction(tp, () => Date.now() + 60_000), "none");
    });
  });

  it("sends nothing to end it when no request fits before the deadline", async () => {
    await withWriter(async (writer, tp) => {
      await kafka.pushBrokerRequestErrors(BROKER, ApiKey.Produce, [
        { code: 0, rttMs: 0 },
        { code: MESSAGE_TOO_LARGE, rttMs: 0 },
      ]);
      await assert.rejects(writer.write(tp, two), { code: "RECORD_REJECTED" });
      const open = await stable(tp);

      const ended = await writer.endOpenTransaction(tp, () => Date.now() + REQUEST_TIMEOUT_MS - 100);

      assert.equal(ended, "no-time");
      assert.equal(await stable(tp), open, "still held: nothing was sent");
    });
  });
});
