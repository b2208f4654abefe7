// Kafka transactions through our own pieces: TransactionCoordinator (FindCoordinator,
// InitProducerId, AddPartitionsToTxn, EndTxn), transactional batches from our encoder sent on our
// produce path, and the partition read back with our Fetch and batch decoders. The broker is
// librdkafka's mock, patched to fence, honour read_committed and checksum its control batches as
// Kafka does (TESTING.md), or real Kafka (KAFKA_TESTBED=real), for the commit/abort and fencing
// tests; the retry tests need the mock's injected errors and coordinator moves.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { systemClock } from "../../../lib/core/clock.js";
import type { MirrorRecord } from "../../../lib/core/model.js";
import { isReplicatorError } from "../../../lib/errors.js";
import type { DecodedBatch } from "../../../lib/kafka/codec/model.js";
import { decodeRecordBatches, encodeRecordBatch } from "../../../lib/kafka/codec/record-batch.js";
import {
  type TransactionalProducer,
  TransactionCoordinator,
  type TransactionCoordinatorOptions,
} from "../../../lib/kafka/produce/transaction-coordinator.js";
import { transactionalIdFor } from "../../../lib/kafka/produce/transactional-id.js";
import { dropAborted } from "../../../lib/kafka/read/read-committed.js";
import { KafkaClusterClient } from "../../../lib/kafka/wire/cluster-client.js";
import { KafkaErrorCode } from "../../../lib/kafka/wire/error-codes.js";
import {
  type AbortedTransaction,
  FETCH_API_KEY,
  FETCH_VERSIONS,
  fetchRequest,
  IsolationLevel,
} from "../../../lib/kafka/wire/fetch.js";
import {
  createKafkaCluster,
  type KafkajsCluster,
  negotiateVersion,
  sendBody,
  sendRequest,
} from "../../../lib/kafka/wire/kafkajs-internals.js";
import {
  decodeProduceResponse,
  PRODUCE_API_KEY,
  PRODUCE_VERSIONS,
  type ProducePartitionResponse,
} from "../../../lib/kafka/wire/produce.js";
import {
  transactionalProduceHeadSize,
  writeTransactionalProduceHead,
} from "../../../lib/kafka/wire/transactional-produce.js";
import { FakeClock } from "../../helpers/fake-clock.js";
import { CapturingLogger } from "../../helpers/fake-observability.js";
import { stableOffsetReaches } from "../../helpers/kafka-eventually.js";
import { KAFKA_TESTBED, startTestKafka, type TestKafka } from "../../helpers/kafka-testbed.js";
import { ApiKey, type MockKafka } from "../../helpers/mock-kafka.js";

const PARTITION = 0;
const API_ADD_PARTITIONS_TO_TXN = 24;
const API_END_TXN = 26;

const values = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => Buffer.from(`${prefix}${i}`));

function records(vals: readonly Buffer[]): MirrorRecord[] {
  return vals.map((value, i) => ({
    offset: i,
    timestamp: 1_700_000_000_000 + i,
    key: null,
    value,
    headers: [],
  }));
}

describe("transactions", () => {
  let kafka: TestKafka;
  let cluster: KafkajsCluster;
  let client: KafkaClusterClient;

  before(async () => {
    // Real Kafka: one broker is enough to coordinate and fence; the mock's three let the
    // coordinator move.
    kafka = await startTestKafka({ brokers: KAFKA_TESTBED === "real" ? 1 : 3 });
    cluster = createKafkaCluster({
      brokers: kafka.bootstrapServers,
      requestTimeoutMs: 5000,
      connectionTimeoutMs: 2000,
    });
    await cluster.connect();
    client = new KafkaClusterClient({
      brokers: kafka.bootstrapServers,
      requestTimeoutMs: 5000,
      connectionTimeoutMs: 2000,
    });
  });

  after(async () => {
    await client?.disconnect();
    await cluster?.disconnect();
    await kafka?.stop();
  });

  /** The mock's fault injection, for the tests that real Kafka cannot stage. */
  function mock(): MockKafka {
    if (kafka.kind !== "mock") throw new Error("this test needs the mock's fault injection");
    return kafka.mock;
  }

  function coordinator(transactionalId: string, extra: Partial<TransactionCoordinatorOptions> = {}) {
    return new TransactionCoordinator({
      client,
      transactionalId,
      clock: systemClock,
      retryBackoffMs: 20,
      ...extra,
    });
  }

  const soon = () => Date.now() + 15_000;

  async function newTopic(): Promise<string> {
    const topic = `test-topic-${randomUUID()}`;
    await kafka.createTopic(topic, 1);
    await cluster.addMultipleTargetTopics([topic]);
    return topic;
  }

  async function leader(topic: string) {
    const [nodeId] = Object.entries(cluster.findLeaderForPartitions(topic, [PARTITION]))[0] ?? [];
    assert.ok(nodeId !== undefined, `no leader for ${topic}`);
    return cluster.findBroker({ nodeId: Number(nodeId) });
  }

  /** One transactional batch on our produce path, as the writer will send it. */
  async function produce(
    topic: string,
    producer: TransactionalProducer,
    vals: readonly Buffer[],
    baseSequence: number,
  ): Promise<ProducePartitionResponse> {
    const topicName = Buffer.from(topic);
    const transactionalId = Buffer.from(producer.transactionalId);
    const batch = await encodeRecordBatch(records(vals), {
      compression: "none",
      producerId: producer.producerId,
      producerEpoch: producer.producerEpoch,
      baseSequence,
      isTransactional: true,
      headroom: transactionalProduceHeadSize(topicName, transactionalId),
    });
    const head = { acks: -1, timeoutMs: 5000, topic: topicName, partition: PARTITION, transactionalId };
    const broker = await leader(topic);
    const apiVersion = negotiateVersion(broker, "Produce", PRODUCE_API_KEY, PRODUCE_VERSIONS);
    const response = await sendBody(
      broker,
      { apiName: "Produce", apiKey: PRODUCE_API_KEY, apiVersion },
      writeTransactionalProduceHead(batch, head),
      (payload) => decodeProduceResponse(apiVersion, payload),
      5000,
    );
    const answer = response.topics[0]?.partitions[0];
    assert.ok(answer);
    return answer;
  }

  /** Every batch of the partition, read_committed, with the aborted transactions the broker listed. */
  async function readPartition(topic: string) {
    const broker = await leader(topic);
    const batches: DecodedBatch[] = [];
    const aborted = new Map<number, AbortedTransaction>();
    for (let offset = 0, end = 1; offset < end; ) {
      const request = {
        maxWaitMs: 0,
        minBytes: 0,
        maxBytes: 1 << 20,
        isolationLevel: IsolationLevel.READ_COMMITTED,
        topics: [{ topic, partitions: [{ partition: PARTITION, fetchOffset: offset, maxBytes: 1 << 20 }] }],
      };
      const response = await sendRequest(
        broker,
        "Fetch",
        FETCH_API_KEY,
        FETCH_VERSIONS,
        (v) => fetchRequest(v, request),
        5000,
      );
      const answer = response.topics[0]?.partitions[0];
      assert.ok(answer);
      assert.equal(answer.errorCode, KafkaErrorCode.NONE);
      for (const txn of answer.abortedTransactions) aborted.set(txn.firstOffset, txn);
      const fetched = (await decodeRecordBatches(answer.records)).filter((b) => b.lastOffset >= offset);
      const last = fetched.at(-1);
      if (last === undefined) break;
      batches.push(...fetched);
      offset = last.lastOffset + 1;
      end = answer.lastStableOffset;
    }
    return { batches, aborted: [...aborted.values()] };
  }

  it("commits one transaction and aborts the next; read_committed keeps only the committed records", async () => {
    // Prepare
    const topic = await newTopic();
    const txn = coordinator(transactionalIdFor("src", topic, PARTITION));
    const producer = await txn.initProducer(soon());
    const committed = values("committed-", 3);
    const abortedValues = values("aborted-", 2);

    // Act
    await txn.addPartition(producer, topic, PARTITION, soon());
    const first = await produce(topic, producer, committed, 0);
    await txn.endTransaction(producer, "commit", soon());
    await txn.addPartition(producer, topic, PARTITION, soon());
    const second = await produce(topic, producer, abortedValues, committed.length);
    await txn.endTransaction(producer, "abort", soon());
    // EndTxn is answered before the ABORT marker is written (the COMMIT one was, before the second
    // AddPartitionsToTxn was accepted); readPartition reads to the LSO, 4 until then.
    await stableOffsetReaches(kafka.bootstrapServers, { topic, partition: PARTITION }, 7);
    const { batches, aborted } = await readPartition(topic);

    // Assess
    assert.deepEqual([first.errorCode, first.baseOffset, second.errorCode], [0, 0, 0]);
    assert.deepEqual(
      batches.map((b) => [b.baseOffset, b.isTransactional, b.isControl, b.controlType, b.records.length]),
      [
        [0, true, false, null, 3],
        [3, true, true, "commit", 0],
        [4, true, false, null, 2],
        [6, true, true, "abort", 0],
      ],
    );
    assert.ok(
      batches.every(
        (b) => b.producerId === producer.producerId && b.producerEpoch === producer.producerEpoch,
      ),
    );
    assert.deepEqual(
      aborted,
      [{ producerId: producer.producerId, firstOffset: second.baseOffset }],
      "the broker's aborted-transactions list",
    );
    const visible = dropAborted(batches, aborted).flatMap((b) => b.records.map((r) => r.value));
    assert.deepEqual(visible, committed);
  });

  it("fences the first holder of a transactional id once a second one initialises it", async () => {
    // Prepare
    const topic = await newTopic();
    const id = transactionalIdFor("src", topic, PARTITION);
    const oldHolder = coordinator(id);
    const first = await oldHolder.initProducer(soon());
    await oldHolder.addPartition(first, topic, PARTITION, soon());
    assert.equal((await produce(topic, first, values("open-", 1), 0)).errorCode, KafkaErrorCode.NONE);

    // Act: another worker takes the partition over.
    const second = await coordinator(id).initProducer(soon());
    const lateProduce = await produce(topic, first, values("late-", 1), 1);
    const lateEnd = oldHolder.endTransaction(first, "commit", soon()).then(
      () => undefined,
      (error: unknown) => error,
    );

    // Assess: same producer id, a later epoch (Kafka bumps it once to abort the open transaction
    // and once more for the retried InitProducerId: first + 2).
    assert.equal(second.producerId, first.producerId);
    assert.ok(
      second.producerEpoch > first.producerEpoch,
      `epoch ${second.producerEpoch} after ${first.producerEpoch}`,
    );
    assert.ok(
      lateProduce.errorCode === KafkaErrorCode.INVALID_PRODUCER_EPOCH ||
        lateProduce.errorCode === KafkaErrorCode.PRODUCER_FENCED,
      `late produce answered ${lateProduce.errorCode}`,
    );
    const refusal = await lateEnd;
    assert.ok(isReplicatorError(refusal, "PRODUCER_FENCED"), `late EndTxn: ${String(refusal)}`);
    assert.equal(refusal.retryable, false);
    assert.deepEqual(
      [refusal.details.transactionalId, refusal.details.producerId, refusal.details.producerEpoch],
      [id, first.producerId.toString(), first.producerEpoch],
    );
    const { batches } = await readPartition(topic);
    assert.deepEqual(
      batches.map((b) => b.controlType),
      [null, "abort"],
      "the takeover aborted the old holder's open transaction",
    );
  });

  // Mock only: injected coordinator errors and a coordinator moved between two requests.
  if (KAFKA_TESTBED === "mock") {
    it("retries loading, moved and busy coordinators, measuring the deadline on the given clock", async () => {
      // Prepare: frozen virtual time far from the wall clock; sleeps advance it.
      const clock = new FakeClock();
      const logger = new CapturingLogger();
      const txn = coordinator(`retry-${randomUUID()}`, { clock, logger, retryBackoffMs: 100 });
      await mock().pushRequestErrors(ApiKey.InitProducerId, [14, 51, 16, 15]);

      // Act
      const producer = await txn.initProducer(clock.now() + 60_000);

      // Assess
      assert.ok(producer.producerId >= 0n);
      assert.equal(logger.entries.filter((e) => e.message === "transaction coordinator retry").length, 4);
    });

    it("retries AddPartitionsToTxn answered CONCURRENT_TRANSACTIONS after 20 ms, not the client's backoff", async () => {
      // The last transaction's markers are still being written: Kafka's producer retries at 20 ms.
      const clock = new FakeClock();
      const logger = new CapturingLogger();
      const txn = coordinator(`concurrent-${randomUUID()}`, { clock, logger, retryBackoffMs: 100 });
      const topic = await newTopic();
      const producer = await txn.initProducer(clock.now() + 60_000);
      await mock().pushRequestErrors(ApiKey.AddPartitionsToTxn, [51, 51]);

      const before = clock.now();
      await txn.addPartition(producer, topic, 0, clock.now() + 60_000);

      assert.equal(logger.entries.filter((e) => e.message === "transaction coordinator retry").length, 2);
      // Pauses of 20 and 40 ms less jitter (30..60); the client's 100 ms would take 150..300.
      const paused = clock.now() - before;
      assert.ok(paused >= 30 && paused <= 60, `paused ${paused} ms`);
      await txn.endTransaction(producer, "abort", clock.now() + 60_000);
    });

    it("follows the transaction coordinator when it moves to another broker", async () => {
      // Prepare
      const topic = await newTopic();
      const id = transactionalIdFor("src", topic, PARTITION);
      const logger = new CapturingLogger();
      const txn = coordinator(id, { logger });
      await mock().setCoordinator("transaction", id, 1);
      const producer = await txn.initProducer(soon());
      await txn.addPartition(producer, topic, PARTITION, soon());
      assert.equal((await produce(topic, producer, values("moved-", 1), 0)).errorCode, KafkaErrorCode.NONE);

      // Act: broker 1 now answers NOT_COORDINATOR for this id.
      await mock().setCoordinator("transaction", id, 2);
      await txn.endTransaction(producer, "commit", soon());

      // Assess
      const retries = logger.entries.filter((e) => e.message === "transaction coordinator retry");
      assert.deepEqual(
        retries.map((e) => e.fields.request),
        ["EndTxn commit"],
      );
      const { batches } = await readPartition(topic);
      assert.deepEqual(
        batches.map((b) => b.controlType),
        [null, "commit"],
      );
    });

    it("gives up at the deadline with a retryable error naming the last refusal", async () => {
      // Prepare
      const clock = new FakeClock();
      const logger = new CapturingLogger();
      const txn = coordinator(`deadline-${randomUUID()}`, { clock, logger, retryBackoffMs: 100 });
      await mock().pushRequestErrors(ApiKey.InitProducerId, Array(40).fill(51));
      const deadline = clock.now() + 2000;

      // Act
      const failure = await txn.initProducer(deadline).then(
        () => undefined,
        (error: unknown) => error,
      );
      await mock().clearRequestErrors(ApiKey.InitProducerId);

      // Assess
      assert.ok(isReplicatorError(failure, "KAFKA_RETRIABLE"), String(failure));
      assert.match(failure.message, /InitProducerId for deadline-.* failed: CONCURRENT_TRANSACTIONS/);
      // It gave up only when no attempt could start before the deadline (retryUntil keeps 1 ms).
      assert.ok(clock.now() >= deadline - 1, `gave up at ${deadline - clock.now()} ms before the deadline`);
      // Each retry slept on the fake clock: Date.now() is far past this deadline and allows none.
      assert.ok(logger.entries.filter((e) => e.message === "transaction coordinator retry").length >= 3);
    });

    it("never retries a fenced or unauthorised answer", async () => {
      // Prepare
      const topic = await newTopic();
      const logger = new CapturingLogger();
      const txn = coordinator(transactionalIdFor("src", topic, PARTITION), { logger });
      const producer = await txn.initProducer(soon());

      // Act
      await mock().pushRequestErrors(API_END_TXN, [KafkaErrorCode.INVALID_PRODUCER_EPOCH]);
      const epoch = await txn.endTransaction(producer, "commit", soon()).catch((e: unknown) => e);
      await mock().pushRequestErrors(API_ADD_PARTITIONS_TO_TXN, [KafkaErrorCode.PRODUCER_FENCED]);
      const fenced = await txn.addPartition(producer, topic, PARTITION, soon()).catch((e: unknown) => e);
      await mock().pushRequestErrors(API_ADD_PARTITIONS_TO_TXN, [53]);
      const unauthorised = await txn
        .addPartition(producer, topic, PARTITION, soon())
        .catch((e: unknown) => e);

      // Assess
      assert.ok(isReplicatorError(epoch, "PRODUCER_FENCED"), String(epoch));
      assert.match(
        epoch.message,
        /EndTxn commit .* refused \(INVALID_PRODUCER_EPOCH\): producer \d+ epoch 0/,
      );
      assert.ok(isReplicatorError(fenced, "PRODUCER_FENCED"), String(fenced));
      assert.equal(fenced.details.kafkaError, "PRODUCER_FENCED");
      assert.ok(isReplicatorError(unauthorised, "KAFKA_FATAL"), String(unauthorised));
      assert.match(unauthorised.message, /TRANSACTIONAL_ID_AUTHORIZATION_FAILED/);
      assert.equal(logger.entries.filter((e) => e.message === "transaction coordinator retry").length, 0);
    });
  }
});
