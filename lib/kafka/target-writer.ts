/**
 * TargetWriter: an idempotent producer (acks=all) that sends record batches we encode ourselves
 * over kafkajs's broker connections. One batch per partition is in flight at a time, so a retry
 * resends the same bytes with the same base sequence and the broker drops the duplicate.
 */
import type { MirrorRecord, TopicPartition, WriteResult } from "../core/model.js";
import type { Logger, TargetWriter } from "../core/ports.js";
import type { ProvenanceStamp } from "../core/provenance.js";
import { isReplicatorError, ReplicatorError } from "../errors.js";
import { backoffDelay, sleep } from "./backoff.js";
import { splitIntoBatches } from "./batch-split.js";
import type { CompressionCodec } from "./compression.js";
import {
  ClusterConnector,
  createKafkaCluster,
  describeError,
  isTransientKafkajsError,
  type KafkaConnectionOptions,
  negotiateVersion,
  sendBody,
  translateKafkajsError,
} from "./connection.js";
import { KafkaErrorCode, KafkaPartitionError, kafkaError } from "./error-codes.js";
import type { KafkajsCluster } from "./kafkajs-internals.js";
import { type ProducerIdentity, ProducerState } from "./producer-state.js";
import {
  decodeProduceResponse,
  PRODUCE_API_KEY,
  PRODUCE_VERSIONS,
  type ProducePartitionResponse,
  produceHeadSize,
  writeProduceHead,
} from "./protocol/produce.js";
import { encodeRecordBatch } from "./record-batch.js";

export interface KafkaTargetWriterOptions extends KafkaConnectionOptions {
  /** @default "none" */
  readonly compression?: CompressionCodec;
  /** Upper bound of a batch's uncompressed size. @default 1 MiB */
  readonly maxBatchBytes?: number;
  /** @default 10000 */
  readonly maxBatchRecords?: number;
  /** How long one batch is retried on transient errors before KAFKA_RETRIABLE. @default 30000 */
  readonly retryDeadlineMs?: number;
  /** First retry delay; doubles per attempt. @default 100 */
  readonly retryBackoffMs?: number;
}

/** The broker refused these records; bisecting a multi-record batch finds the one to blame. */
const REJECTING_ERRORS: ReadonlySet<number> = new Set([
  KafkaErrorCode.MESSAGE_TOO_LARGE,
  KafkaErrorCode.RECORD_LIST_TOO_LARGE,
  KafkaErrorCode.CORRUPT_MESSAGE,
  KafkaErrorCode.INVALID_RECORD,
  KafkaErrorCode.INVALID_TIMESTAMP,
]);

/** The broker no longer accepts this producer's sequence for the partition. */
const STATE_LOST_ERRORS: ReadonlySet<number> = new Set([
  KafkaErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
  KafkaErrorCode.UNKNOWN_PRODUCER_ID,
  KafkaErrorCode.INVALID_PRODUCER_EPOCH,
  KafkaErrorCode.PRODUCER_FENCED,
]);

export class KafkaTargetWriter implements TargetWriter {
  private readonly cluster: KafkajsCluster;
  private readonly state = new ProducerState();
  /** Tail of each partition's chain of writes: one batch in flight per partition. */
  private readonly tails = new Map<string, Promise<unknown>>();
  private readonly compression: CompressionCodec;
  private readonly maxBatchBytes: number;
  private readonly maxBatchRecords: number;
  private readonly retryDeadlineMs: number;
  private readonly retryBackoffMs: number;
  private readonly requestTimeoutMs: number;
  private readonly logger: Logger | undefined;
  private initializing: Promise<ProducerIdentity> | undefined;
  private readonly connector: ClusterConnector;
  private closed = false;

  constructor(options: KafkaTargetWriterOptions) {
    this.cluster = createKafkaCluster(options);
    this.connector = new ClusterConnector(this.cluster, options.logger);
    this.compression = options.compression ?? "none";
    this.maxBatchBytes = options.maxBatchBytes ?? 1024 * 1024;
    this.maxBatchRecords = options.maxBatchRecords ?? 10_000;
    this.retryDeadlineMs = options.retryDeadlineMs ?? 30_000;
    this.retryBackoffMs = options.retryBackoffMs ?? 100;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.logger = options.logger;
  }

  write(
    tp: TopicPartition,
    records: readonly MirrorRecord[],
    stamp: ProvenanceStamp | null = null,
  ): Promise<WriteResult> {
    const key = partitionKey(tp);
    const previous = this.tails.get(key) ?? Promise.resolve();
    const run = previous.then(
      () => this.writeInOrder(tp, records, stamp),
      () => this.writeInOrder(tp, records, stamp),
    );
    const tail = run.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return run;
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.tails.values()]);
    await this.cluster.disconnect();
  }

  private async writeInOrder(
    tp: TopicPartition,
    records: readonly MirrorRecord[],
    stamp: ProvenanceStamp | null,
  ): Promise<WriteResult> {
    let baseOffset = -1;
    let first = true;
    for (const batch of splitIntoBatches(records, this.maxBatchBytes, this.maxBatchRecords, stamp)) {
      const offset = await this.sendBatch(tp, batch, stamp);
      if (first) baseOffset = offset;
      first = false;
    }
    return { baseOffset, records: records.length };
  }

  /** Sends one batch until acknowledged; returns the target offset of its first record, or -1 if unknown. */
  private async sendBatch(
    tp: TopicPartition,
    records: readonly MirrorRecord[],
    stamp: ProvenanceStamp | null,
  ): Promise<number> {
    const deadline = Date.now() + this.retryDeadlineMs;
    const identity = await this.producerIdentity(deadline);
    const key = partitionKey(tp);
    const baseSequence = this.state.nextSequence(key, identity);
    // The batch is laid out right behind the request's head: the body is sent as it is.
    const topic = Buffer.from(tp.topic, "utf8");
    const body = writeProduceHead(
      await encodeRecordBatch(records, {
        compression: this.compression,
        producerId: identity.producerId,
        producerEpoch: identity.producerEpoch,
        baseSequence,
        stamp,
        headroom: produceHeadSize(topic),
      }),
      { acks: -1, timeoutMs: this.requestTimeoutMs, topic, partition: tp.partition },
    );
    const firstOffset = records[0]?.offset ?? -1;
    const lastOffset = records.at(-1)?.offset ?? -1;
    const details = {
      topic: tp.topic,
      partition: tp.partition,
      sourceOffset: firstOffset,
      sourceLastOffset: lastOffset,
    };

    for (let attempt = 0; ; attempt++) {
      let response: ProducePartitionResponse;
      try {
        response = await this.produceOnce(tp, body);
      } catch (error) {
        if (!isTransient(error))
          throw translateKafkajsError(error, `produce to ${tp.topic}/${tp.partition}`, details);
        if (Date.now() >= deadline) {
          // The batch may or may not have landed: its sequence is no longer safe to reuse.
          this.state.reset(key, identity);
          throw translateKafkajsError(
            error,
            `produce to ${tp.topic}/${tp.partition} (retries exhausted)`,
            details,
          );
        }
        this.logger?.debug("produce retry", { ...details, attempt, error: describeError(error) });
        await this.refreshMetadata();
        await sleep(
          Math.min(
            backoffDelay(attempt, { initialMs: this.retryBackoffMs }),
            Math.max(0, deadline - Date.now()),
          ),
        );
        continue;
      }

      const code = response.errorCode;
      if (code === KafkaErrorCode.NONE || code === KafkaErrorCode.DUPLICATE_SEQUENCE_NUMBER) {
        this.state.acknowledged(key, identity, baseSequence, records.length);
        return code === KafkaErrorCode.NONE ? response.baseOffset : -1;
      }
      const info = kafkaError(code);
      if (STATE_LOST_ERRORS.has(code)) {
        this.state.reset(key, identity);
        throw new ReplicatorError(
          "PRODUCER_STATE_LOST",
          `producer state for ${tp.topic}/${tp.partition} lost: ${info.name}`,
          {
            details: { ...details, kafkaErrorCode: code, kafkaError: info.name },
          },
        );
      }
      if (REJECTING_ERRORS.has(code)) {
        if (records.length > 1) return this.sendHalves(tp, records, stamp);
        throw new ReplicatorError(
          "RECORD_REJECTED",
          `target refused record ${firstOffset} for ${tp.topic}/${tp.partition}: ${info.name}`,
          {
            details: {
              topic: tp.topic,
              partition: tp.partition,
              sourceOffset: firstOffset,
              kafkaErrorCode: code,
              kafkaError: info.name,
            },
          },
        );
      }
      if (!info.retriable) {
        throw new ReplicatorError(
          "KAFKA_FATAL",
          `produce to ${tp.topic}/${tp.partition} failed: ${info.name}`,
          {
            details: { ...details, kafkaErrorCode: code, kafkaError: info.name },
          },
        );
      }
      if (Date.now() >= deadline) {
        // A retriable answer means the broker did not append the batch, but a timed-out earlier
        // attempt may have: treat the sequence as unsafe either way.
        this.state.reset(key, identity);
        throw new ReplicatorError(
          "KAFKA_RETRIABLE",
          `produce to ${tp.topic}/${tp.partition} failed: ${info.name} (retries exhausted)`,
          {
            cause: new KafkaPartitionError(code),
            details: { ...details, kafkaErrorCode: code, kafkaError: info.name },
          },
        );
      }
      this.logger?.debug("produce retry", { ...details, attempt, kafkaError: info.name });
      await this.refreshMetadata();
      await sleep(
        Math.min(
          backoffDelay(attempt, { initialMs: this.retryBackoffMs }),
          Math.max(0, deadline - Date.now()),
        ),
      );
    }
  }

  /** The broker refused the batch without consuming its sequence; find the record to blame. */
  private async sendHalves(
    tp: TopicPartition,
    records: readonly MirrorRecord[],
    stamp: ProvenanceStamp | null,
  ): Promise<number> {
    const middle = Math.ceil(records.length / 2);
    const first = await this.sendBatch(tp, records.slice(0, middle), stamp);
    await this.sendBatch(tp, records.slice(middle), stamp);
    return first;
  }

  /** One attempt of a produce request whose body (head and record batch) is laid out already. */
  private async produceOnce(tp: TopicPartition, body: Buffer): Promise<ProducePartitionResponse> {
    if (this.closed) throw new ReplicatorError("KAFKA_FATAL", "target writer is closed");
    await this.connect();
    await this.cluster.addMultipleTargetTopics([tp.topic]);
    const partition = this.cluster
      .findTopicPartitionMetadata(tp.topic)
      .find((p) => p.partitionId === tp.partition);
    if (partition === undefined) throw new KafkaPartitionError(KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    if (partition.leader === null || partition.leader < 0)
      throw new KafkaPartitionError(KafkaErrorCode.LEADER_NOT_AVAILABLE);
    const broker = await this.cluster.findBroker({ nodeId: partition.leader });
    const apiVersion = negotiateVersion(broker, "Produce", PRODUCE_API_KEY, PRODUCE_VERSIONS);
    const response = await sendBody(
      broker,
      { apiName: "Produce", apiKey: PRODUCE_API_KEY, apiVersion },
      body,
      (payload) => decodeProduceResponse(apiVersion, payload),
      this.requestTimeoutMs,
    );
    const answer = response.topics
      .find((t) => t.topic === tp.topic)
      ?.partitions.find((p) => p.partition === tp.partition);
    if (answer === undefined) throw new KafkaPartitionError(KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    return answer;
  }

  private producerIdentity(deadline: number): Promise<ProducerIdentity> {
    const current = this.state.current();
    if (current !== undefined) return Promise.resolve(current);
    this.initializing ??= this.initProducerId(deadline).finally(() => {
      this.initializing = undefined;
    });
    return this.initializing;
  }

  private async initProducerId(deadline: number): Promise<ProducerIdentity> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.connect();
        await this.cluster.refreshMetadataIfNecessary();
        // Non-transactional: any broker may answer; kafkajs's producer asks the controller too.
        const broker = await this.cluster.findControllerBroker();
        const result = await broker.initProducerId({
          transactionalId: null,
          transactionTimeout: this.requestTimeoutMs,
        });
        this.logger?.info("producer id assigned", {
          producerId: result.producerId,
          producerEpoch: result.producerEpoch,
        });
        return this.state.adopt(BigInt(result.producerId), result.producerEpoch);
      } catch (error) {
        if (!isTransient(error) || Date.now() >= deadline)
          throw translateKafkajsError(error, "InitProducerId");
        await this.refreshMetadata();
        await sleep(
          Math.min(
            backoffDelay(attempt, { initialMs: this.retryBackoffMs }),
            Math.max(0, deadline - Date.now()),
          ),
        );
      }
    }
  }

  private connect(): Promise<void> {
    return this.connector.connect();
  }

  private refreshMetadata(): Promise<void> {
    return this.connector.refreshMetadata();
  }
}

function partitionKey(tp: TopicPartition): string {
  return `${tp.partition}:${tp.topic}`;
}

function isTransient(error: unknown): boolean {
  if (error instanceof KafkaPartitionError) return error.retriable;
  if (isReplicatorError(error)) return error.retryable && error.code === "KAFKA_RETRIABLE";
  return isTransientKafkajsError(error);
}
