/**
 * TargetWriter: an idempotent producer (acks=all) that sends record batches we encode ourselves
 * over kafkajs's broker connections. A write of several batches sends up to five of them at once,
 * in order on one connection, as Kafka's idempotent producer allows: the broker appends a
 * producer's batches to a partition only in sequence order, so whatever lands is always a prefix
 * of the write. A batch that did not land is then sent again alone, with the same bytes and base
 * sequence, until acknowledged; if an earlier attempt did land after all, the broker drops the
 * duplicate.
 */
import type { MirrorRecord, TopicPartition, WriteResult } from "../core/model.js";
import type { Logger, TargetWriter } from "../core/ports.js";
import type { ProvenanceStamp } from "../core/provenance.js";
import { isReplicatorError, ReplicatorError } from "../errors.js";
import { backoffDelay, sleep } from "./backoff.js";
import { splitIntoBatches } from "./batch-split.js";
import type { CompressionCodec } from "./compression.js";
import {
  type BodyApi,
  ClusterConnector,
  createKafkaCluster,
  describeError,
  enqueueBody,
  isTransientKafkajsError,
  type KafkaConnectionOptions,
  negotiateVersion,
  readyConnection,
  sendBody,
  translateKafkajsError,
} from "./connection.js";
import { KafkaErrorCode, KafkaPartitionError, kafkaError } from "./error-codes.js";
import type { KafkajsBroker, KafkajsCluster, KafkajsConnection } from "./kafkajs-internals.js";
import { type ProducerIdentity, ProducerState, sequenceAfter } from "./producer-state.js";
import {
  decodeProduceResponse,
  PRODUCE_API_KEY,
  PRODUCE_VERSIONS,
  type ProducePartitionResponse,
  type ProduceResponse,
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
  /**
   * Batches of one write sent before the first is acknowledged, 1..5. Above 1 the target must
   * refuse out-of-sequence batches of an idempotent producer, as Kafka does. @default 5
   */
  readonly maxInFlightBatches?: number;
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
  private readonly maxInFlightBatches: number;
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
    this.maxInFlightBatches = options.maxInFlightBatches ?? MAX_IN_FLIGHT_BATCHES;
    if (
      !Number.isInteger(this.maxInFlightBatches) ||
      this.maxInFlightBatches < 1 ||
      this.maxInFlightBatches > MAX_IN_FLIGHT_BATCHES
    ) {
      throw new RangeError(
        `maxInFlightBatches must be an integer from 1 to ${MAX_IN_FLIGHT_BATCHES}, got ${this.maxInFlightBatches}`,
      );
    }
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
    const batches = splitIntoBatches(records, this.maxBatchBytes, this.maxBatchRecords, stamp);
    let baseOffset: number | null = null;
    for (let i = 0; i < batches.length; i += this.maxInFlightBatches) {
      const group = batches.slice(i, i + this.maxInFlightBatches);
      let landed = 0;
      if (group.length > 1) {
        const pipelined = await this.sendPipelined(tp, group, stamp);
        landed = pipelined.landed;
        if (landed > 0) baseOffset ??= pipelined.baseOffset;
      }
      // What the pipeline did not land: one batch at a time, with retries and, for a record the
      // broker refuses, bisection. The sequences continue where the landed batches ended, so a
      // batch resent here carries the same bytes as in the pipeline.
      for (const batch of group.slice(landed)) {
        const offset = await this.sendBatch(tp, batch, stamp);
        baseOffset ??= offset;
      }
    }
    return { baseOffset: baseOffset ?? -1, records: records.length };
  }

  /**
   * One attempt at sending `group` (at most maxInFlightBatches batches) back to back on the
   * leader's connection. Returns how many leading batches landed and the target offset of the
   * first record (-1 when unknown). Never throws for what the one-by-one path can handle: any
   * failure leaves the batches from the first not-landed one on to it.
   */
  private async sendPipelined(
    tp: TopicPartition,
    group: readonly (readonly MirrorRecord[])[],
    stamp: ProvenanceStamp | null,
  ): Promise<{ landed: number; baseOffset: number }> {
    const none = { landed: 0, baseOffset: -1 };
    if (this.closed) return none;
    let identity: ProducerIdentity;
    let leader: Awaited<ReturnType<KafkaTargetWriter["leaderOf"]>>;
    let connection: KafkajsConnection;
    try {
      identity = await this.producerIdentity(Date.now() + this.retryDeadlineMs);
      leader = await this.leaderOf(tp);
      connection = await readyConnection(leader.broker, leader.api);
    } catch {
      return none;
    }
    const key = partitionKey(tp);
    const sequences: number[] = [];
    const bodies: Buffer[] = [];
    let sequence = this.state.nextSequence(key, identity);
    for (const batch of group) {
      sequences.push(sequence);
      bodies.push(await this.produceBody(tp, batch, stamp, identity, sequence));
      sequence = sequenceAfter(sequence, batch.length);
    }
    // Queued in one turn, so they reach the broker in sequence order.
    const answers = await Promise.allSettled(
      bodies.map((body) =>
        enqueueBody(
          connection,
          leader.api,
          body,
          (payload) => partitionAnswer(decodeProduceResponse(leader.api.apiVersion, payload), tp),
          this.requestTimeoutMs,
        ),
      ),
    );
    // The broker appends a producer's batches only in sequence order: an acknowledged batch means
    // every batch before it landed too, whatever their own answers said (a timed-out request may
    // have landed all the same).
    let landed = 0;
    answers.forEach((answer, k) => {
      if (answer.status === "fulfilled" && isLanded(answer.value.errorCode)) landed = k + 1;
    });
    if (landed > 0) {
      this.state.acknowledged(key, identity, sequences[landed - 1] as number, group[landed - 1]?.length ?? 0);
    }
    const failed = answers[landed];
    if (failed !== undefined && this.retryDeadlineMs === 0 && !isRefusal(failed)) {
      // No time to retry (exactly-once mode): as in sendBatch, a batch that may have landed is
      // not sent again, which would rely on the broker's de-duplication; the caller looks.
      this.state.reset(key, identity);
      throw pipelineFailure(failed, tp, group[landed] ?? []);
    }
    if (landed === 0) return none;
    const first = answers[0];
    const baseOffset =
      first?.status === "fulfilled" && first.value.errorCode === KafkaErrorCode.NONE
        ? first.value.baseOffset
        : -1;
    return { landed, baseOffset };
  }

  /** A produce request's body: its head, then the batch, laid out once in one buffer. */
  private async produceBody(
    tp: TopicPartition,
    records: readonly MirrorRecord[],
    stamp: ProvenanceStamp | null,
    identity: ProducerIdentity,
    baseSequence: number,
  ): Promise<Buffer> {
    const topic = Buffer.from(tp.topic, "utf8");
    return writeProduceHead(
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
    const body = await this.produceBody(tp, records, stamp, identity, baseSequence);
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
      if (isLanded(code)) {
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
    const { broker, api } = await this.leaderOf(tp);
    const response = await sendBody(
      broker,
      api,
      body,
      (payload) => decodeProduceResponse(api.apiVersion, payload),
      this.requestTimeoutMs,
    );
    return partitionAnswer(response, tp);
  }

  /** The partition's leader as metadata has it, and the Produce version to speak to it. */
  private async leaderOf(tp: TopicPartition): Promise<{ broker: KafkajsBroker; api: BodyApi }> {
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
    return { broker, api: { apiName: "Produce", apiKey: PRODUCE_API_KEY, apiVersion } };
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

/**
 * Unacknowledged batches per partition whose order an idempotent producer keeps (Kafka's limit on
 * max.in.flight.requests.per.connection with idempotence on); also the broker's de-duplication
 * window per producer and partition.
 */
const MAX_IN_FLIGHT_BATCHES = 5;

/** The broker refused the batch itself (it never lands as it is): sendBatch bisects it. */
function isRefusal(answer: PromiseSettledResult<ProducePartitionResponse>): boolean {
  return answer.status === "fulfilled" && REJECTING_ERRORS.has(answer.value.errorCode);
}

/** The error a failed pipelined batch ends its write with, as sendBatch would have thrown it. */
function pipelineFailure(
  answer: PromiseSettledResult<ProducePartitionResponse>,
  tp: TopicPartition,
  records: readonly MirrorRecord[],
): ReplicatorError {
  const what = `produce to ${tp.topic}/${tp.partition}`;
  const details = {
    topic: tp.topic,
    partition: tp.partition,
    sourceOffset: records[0]?.offset ?? -1,
    sourceLastOffset: records.at(-1)?.offset ?? -1,
  };
  if (answer.status === "rejected") return translateKafkajsError(answer.reason, what, details);
  const code = answer.value.errorCode;
  const info = kafkaError(code);
  const kafka = { kafkaErrorCode: code, kafkaError: info.name };
  if (STATE_LOST_ERRORS.has(code)) {
    return new ReplicatorError(
      "PRODUCER_STATE_LOST",
      `producer state for ${tp.topic}/${tp.partition} lost: ${info.name}`,
      {
        details: { ...details, ...kafka },
      },
    );
  }
  return new ReplicatorError(
    info.retriable ? "KAFKA_RETRIABLE" : "KAFKA_FATAL",
    `${what} failed: ${info.name}`,
    {
      cause: new KafkaPartitionError(code),
      details: { ...details, ...kafka },
    },
  );
}

/** The batch is in the log: appended now, or a duplicate of one appended earlier. */
function isLanded(code: number): boolean {
  return code === KafkaErrorCode.NONE || code === KafkaErrorCode.DUPLICATE_SEQUENCE_NUMBER;
}

function partitionAnswer(response: ProduceResponse, tp: TopicPartition): ProducePartitionResponse {
  const answer = response.topics
    .find((t) => t.topic === tp.topic)
    ?.partitions.find((p) => p.partition === tp.partition);
  if (answer === undefined) throw new KafkaPartitionError(KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  return answer;
}

function partitionKey(tp: TopicPartition): string {
  return `${tp.partition}:${tp.topic}`;
}

function isTransient(error: unknown): boolean {
  if (error instanceof KafkaPartitionError) return error.retriable;
  if (isReplicatorError(error)) return error.retryable && error.code === "KAFKA_RETRIABLE";
  return isTransientKafkajsError(error);
}
