/**
 * A partition's batches as the broker stores them, for tests that look at bytes: our Fetch v11
 * read_uncommitted from offset 0 to the high watermark, each batch decoded (CRCs checked) and
 * kept with its bytes; and one batch produced exactly as laid out (produceRaw).
 */
import assert from "node:assert/strict";
import type { TopicPartition } from "../../lib/core/model.js";
import type { DecodedBatch } from "../../lib/kafka/codec/model.js";
import { decodeRecordBatches } from "../../lib/kafka/codec/record-batch.js";
import { KafkaErrorCode } from "../../lib/kafka/wire/error-codes.js";
import { FETCH_API_KEY, FETCH_VERSIONS, fetchRequest, IsolationLevel } from "../../lib/kafka/wire/fetch.js";
import {
  createKafkaCluster,
  negotiateVersion,
  partitionLeader,
  sendBody,
  sendRequest,
} from "../../lib/kafka/wire/kafkajs-internals.js";
import {
  decodeProduceResponse,
  PRODUCE_API_KEY,
  PRODUCE_VERSIONS,
  produceHeadSize,
  writeProduceHead,
} from "../../lib/kafka/wire/produce.js";

export interface RawBatch {
  readonly batch: DecodedBatch;
  /** The batch's bytes as the broker stored them. */
  readonly bytes: Buffer;
}

/** Every batch of `topic`'s `partition` from offset 0 to its high watermark. */
export async function rawBatches(
  brokers: readonly string[],
  topic: string,
  partition = 0,
): Promise<RawBatch[]> {
  const cluster = createKafkaCluster({ brokers, clientId: "raw-batches", requestTimeoutMs: 10_000 });
  await cluster.connect();
  try {
    await cluster.addMultipleTargetTopics([topic]);
    const [nodeId] = Object.keys(cluster.findLeaderForPartitions(topic, [partition]));
    const broker = await cluster.findBroker({ nodeId: Number(nodeId) });
    const batches: RawBatch[] = [];
    for (let offset = 0, end = 1; offset < end; ) {
      const partitions = [{ partition, fetchOffset: offset, maxBytes: 1 << 20 }];
      const request = {
        maxWaitMs: 0,
        minBytes: 0,
        maxBytes: 1 << 20,
        isolationLevel: IsolationLevel.READ_UNCOMMITTED,
      };
      const response = await sendRequest(
        broker,
        "Fetch",
        FETCH_API_KEY,
        FETCH_VERSIONS,
        (v) => fetchRequest(v, { ...request, topics: [{ topic, partitions }] }),
        10_000,
      );
      const answer = response.topics[0]?.partitions[0];
      assert.ok(
        answer && answer.errorCode === KafkaErrorCode.NONE,
        `Fetch of ${topic}/${partition} at ${offset}`,
      );
      end = answer.highWatermark;
      let pos = 0;
      for (const batch of await decodeRecordBatches(answer.records)) {
        const bytes = answer.records.subarray(pos, pos + batch.sizeInBytes);
        pos += batch.sizeInBytes;
        if (batch.lastOffset < offset) continue;
        batches.push({ batch, bytes });
        offset = batch.lastOffset + 1;
      }
    }
    return batches;
  } finally {
    await cluster.disconnect();
  }
}

/** The data batches of `batches`: the transaction markers left out. */
export function dataOf(batches: readonly RawBatch[]): RawBatch[] {
  return batches.filter((b) => !b.batch.isControl);
}

/** The codec id of a v2 batch as it lies (attributes bits 0-2: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd). */
export function codecIdOf(bytes: Buffer): number {
  return bytes.readInt16BE(21) & 0x07;
}

/** One Produce of `batch` as laid out, no producer of ours around it: the broker's answer code. */
export async function produceRaw(
  brokers: readonly string[],
  tp: TopicPartition,
  batch: Buffer,
): Promise<number> {
  const cluster = createKafkaCluster({ brokers, clientId: "produce-raw", requestTimeoutMs: 10_000 });
  await cluster.connect();
  try {
    await cluster.addMultipleTargetTopics([tp.topic]);
    const broker = await cluster.findBroker({ nodeId: await partitionLeader(cluster, tp) });
    const topic = Buffer.from(tp.topic);
    const body = Buffer.alloc(produceHeadSize(topic) + batch.length);
    batch.copy(body, produceHeadSize(topic));
    writeProduceHead(body, { acks: -1, timeoutMs: 10_000, topic, partition: tp.partition });
    const apiVersion = negotiateVersion(broker, "Produce", PRODUCE_API_KEY, PRODUCE_VERSIONS);
    const api = { apiName: "Produce", apiKey: PRODUCE_API_KEY, apiVersion };
    const response = await sendBody(broker, api, body, (p) => decodeProduceResponse(apiVersion, p), 10_000);
    const answer = response.topics[0]?.partitions[0];
    assert.ok(answer);
    return answer.errorCode;
  } finally {
    await cluster.disconnect();
  }
}
