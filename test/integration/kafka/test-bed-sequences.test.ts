// The test bed's mock broker checks an idempotent producer's sequence numbers as Kafka does
// (testbed/mock-kafka/patch-idempotence.pl): pipelined produce is only tested meaningfully if a
// batch that skips ahead is refused and a resent one is not appended twice.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { MirrorRecord } from "../../../lib/core/model.js";
import { encodeRecordBatch } from "../../../lib/kafka/codec/record-batch.js";
import { KafkaErrorCode } from "../../../lib/kafka/wire/error-codes.js";
import {
  createKafkaCluster,
  type KafkajsBroker,
  type KafkajsCluster,
  negotiateVersion,
  sendBody,
} from "../../../lib/kafka/wire/kafkajs-internals.js";
import {
  decodeProduceResponse,
  PRODUCE_API_KEY,
  PRODUCE_VERSIONS,
  produceHeadSize,
  writeProduceHead,
} from "../../../lib/kafka/wire/produce.js";
import { type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";

const TOPIC = "sequences";

const records = (n: number): MirrorRecord[] =>
  Array.from({ length: n }, (_, i) => ({
    offset: i,
    timestamp: 1_700_000_000_000,
    key: null,
    value: Buffer.from(`v${i}`),
    headers: [],
  }));

describe("test bed: idempotent producer sequences", () => {
  let kafka: MockKafka;
  let cluster: KafkajsCluster;
  let broker: KafkajsBroker;

  before(async () => {
    kafka = await startMockKafka({ brokers: 1 });
    await kafka.createTopic(TOPIC, 1, 1);
    cluster = createKafkaCluster({ brokers: kafka.bootstrapServers });
    await cluster.connect();
    await cluster.refreshMetadata();
    broker = await cluster.findControllerBroker();
  });

  after(async () => {
    await cluster?.disconnect();
    await kafka?.stop();
  });

  function produce(producerId: bigint, producerEpoch: number, baseSequence: number, count: number) {
    return produceTo(TOPIC, producerId, producerEpoch, baseSequence, count);
  }

  async function logEnd(name: string): Promise<number> {
    const [end] = await broker
      .listOffsets({ topics: [{ topic: name, partitions: [{ partition: 0, timestamp: -1 }] }] })
      .then((r) => r.responses.flatMap((t) => t.partitions));
    return Number(end?.offset);
  }

  async function produceTo(
    name: string,
    producerId: bigint,
    producerEpoch: number,
    baseSequence: number,
    count: number,
  ) {
    const topic = Buffer.from(name);
    const body = writeProduceHead(
      await encodeRecordBatch(records(count), {
        compression: "none",
        producerId,
        producerEpoch,
        baseSequence,
        headroom: produceHeadSize(topic),
      }),
      { acks: -1, timeoutMs: 5000, topic, partition: 0 },
    );
    const apiVersion = negotiateVersion(broker, "Produce", PRODUCE_API_KEY, PRODUCE_VERSIONS);
    const response = await sendBody(
      broker,
      { apiName: "Produce", apiKey: PRODUCE_API_KEY, apiVersion },
      body,
      (payload) => decodeProduceResponse(apiVersion, payload),
      5000,
    );
    const answer = response.topics[0]?.partitions[0];
    assert.ok(answer);
    return answer;
  }

  it("refuses a batch that skips a sequence, drops a resent one, and leaves producers without an id alone", async () => {
    const { producerId, producerEpoch } = await broker.initProducerId({ transactionalId: null });
    const id = BigInt(producerId);

    assert.equal((await produce(id, producerEpoch, 0, 3)).errorCode, KafkaErrorCode.NONE);
    assert.equal(
      (await produce(id, producerEpoch, 5, 2)).errorCode,
      KafkaErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
    );
    const resent = await produce(id, producerEpoch, 0, 3);
    assert.ok(
      resent.errorCode === KafkaErrorCode.NONE ||
        resent.errorCode === KafkaErrorCode.DUPLICATE_SEQUENCE_NUMBER,
      `resent batch answered ${resent.errorCode}`,
    );
    assert.equal((await produce(id, producerEpoch, 3, 2)).errorCode, KafkaErrorCode.NONE);
    // A producer without an id (not idempotent) has no sequences to check.
    assert.equal((await produce(-1n, -1, -1, 4)).errorCode, KafkaErrorCode.NONE);
    assert.equal((await produce(-1n, -1, -1, 4)).errorCode, KafkaErrorCode.NONE);

    assert.equal(await logEnd(TOPIC), 3 + 2 + 4 + 4);
  });

  it("drops every batch of a resent run, also one that is not the partition's latest (regression)", async () => {
    // A run of resends, as the writer makes after a pipelined write timed out: upstream's mock
    // moved its expected sequence back on each duplicate and appended the third one again.
    await kafka.createTopic(`${TOPIC}-run`, 1, 1);
    const { producerId, producerEpoch } = await broker.initProducerId({ transactionalId: null });
    const id = BigInt(producerId);
    const send = (base: number) => produceTo(`${TOPIC}-run`, id, producerEpoch, base, 10);
    for (const base of [0, 10, 20, 30]) assert.equal((await send(base)).errorCode, KafkaErrorCode.NONE);

    for (const base of [0, 10, 20, 30]) {
      const resent = await send(base);
      assert.ok(
        resent.errorCode === KafkaErrorCode.NONE ||
          resent.errorCode === KafkaErrorCode.DUPLICATE_SEQUENCE_NUMBER,
        `resent batch ${base} answered ${resent.errorCode}`,
      );
    }
    assert.equal((await send(40)).errorCode, KafkaErrorCode.NONE);

    assert.equal(await logEnd(`${TOPIC}-run`), 50);
  });
});
