/**
 * Who sends the target writer's produce requests: the cluster connection, leader lookup, the
 * producer identity (InitProducerId) and sequences, and the encoding and sending of one produce
 * request. The writer (target-writer.ts) decides what to send and when.
 *
 * Two kinds of identity: without fencing, one idempotent producer serves every partition; with
 * fencing, each target partition has a transactional producer of its own
 * (transaction-producers.ts), whose InitProducerId fences every earlier writer of the partition.
 */
import type { MirrorRecord, TopicPartition } from "../core/model.js";
import type { Logger } from "../core/ports.js";
import type { ProvenanceStamp } from "../core/provenance.js";
import { ReplicatorError } from "../errors.js";
import { sleepBeforeRetry } from "./backoff.js";
import type { CompressionCodec } from "./compression.js";
import {
  type BodyApi,
  ClusterConnector,
  createKafkaCluster,
  enqueueBody,
  type KafkaConnectionOptions,
  negotiateVersion,
  readyConnection,
  translateKafkajsError,
} from "./connection.js";
import { KafkaErrorCode, KafkaPartitionError } from "./error-codes.js";
import type { KafkajsBroker, KafkajsCluster, KafkajsConnection } from "./kafkajs-internals.js";
import { isTransient, partitionAnswer } from "./produce-outcome.js";
import { type ProducerIdentity, ProducerState } from "./producer-state.js";
import {
  decodeProduceResponse,
  PRODUCE_API_KEY,
  PRODUCE_VERSIONS,
  type ProducePartitionResponse,
  produceHeadSize,
  writeProduceHead,
} from "./protocol/produce.js";
import {
  transactionalProduceHeadSize,
  writeTransactionalProduceHead,
} from "./protocol/transactional-produce.js";
import { encodeRecordBatch } from "./record-batch.js";
import { TransactionProducers } from "./transaction-producers.js";

export interface ProducerSessionOptions extends KafkaConnectionOptions {
  readonly compression: CompressionCodec;
  readonly requestTimeoutMs: number;
  readonly retryBackoffMs: number;
  readonly now: () => number;
  /** Fenced writes: one transactional producer per target partition. Null: one idempotent producer. */
  readonly transactions: TransactionSettings | null;
}

export interface TransactionSettings {
  /** The source alias: transactional ids are kafka-mirror.<alias>/<topic>/<partition>. */
  readonly alias: string;
  /** transaction.timeout.ms: the coordinator aborts a transaction left open longer. */
  readonly transactionTimeoutMs: number;
}

/** A partition's leader and the Produce version to speak to it. */
export interface Leader {
  readonly broker: KafkajsBroker;
  readonly api: BodyApi;
}

/** One produce attempt: the broker's answer, or the error and whether the request may have gone out. */
export type Attempt =
  | { readonly answer: ProducePartitionResponse }
  | { readonly error: unknown; readonly sent: boolean };

export class ProducerSession {
  /** The idempotent producer's state (no fencing). */
  private readonly shared = new ProducerState();
  private readonly cluster: KafkajsCluster;
  private readonly connector: ClusterConnector;
  private readonly options: ProducerSessionOptions;
  /** Per-partition transactional producers (fencing); null without fencing. */
  readonly transactions: TransactionProducers | null;
  private initializing: Promise<ProducerIdentity> | undefined;
  private closed = false;

  constructor(options: ProducerSessionOptions) {
    this.options = options;
    this.cluster = createKafkaCluster(options);
    this.connector = new ClusterConnector(this.cluster, options.logger);
    this.transactions =
      options.transactions === null
        ? null
        : new TransactionProducers({
            cluster: this.cluster,
            connector: this.connector,
            ...options.transactions,
            now: options.now,
            retryBackoffMs: options.retryBackoffMs,
            ...(options.logger === undefined ? {} : { logger: options.logger }),
          });
  }

  private get logger(): Logger | undefined {
    return this.options.logger;
  }

  /** Sequences of `tp`'s batches under its producer identity. */
  state(tp: TopicPartition): ProducerState {
    return this.transactions?.state(tp) ?? this.shared;
  }

  /**
   * The producer identity `tp` is written with, asking the cluster for one (until `deadline`)
   * when there is none. With fencing that InitProducerId fences earlier writers of `tp`.
   */
  identity(tp: TopicPartition, deadline: number): Promise<ProducerIdentity> {
    if (this.transactions !== null) return this.transactions.identity(tp, deadline);
    const current = this.shared.current();
    if (current !== undefined) return Promise.resolve(current);
    this.initializing ??= this.initProducerId(deadline).finally(() => {
      this.initializing = undefined;
    });
    return this.initializing;
  }

  /** The partition's leader as metadata has it, connected and authenticated. */
  async leader(tp: TopicPartition): Promise<Leader & { readonly connection: KafkajsConnection }> {
    if (this.closed) throw new ReplicatorError("KAFKA_FATAL", "target writer is closed");
    await this.connector.connect();
    await this.cluster.addMultipleTargetTopics([tp.topic]);
    const partition = this.cluster
      .findTopicPartitionMetadata(tp.topic)
      .find((p) => p.partitionId === tp.partition);
    if (partition === undefined) throw new KafkaPartitionError(KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    if (partition.leader === null || partition.leader < 0)
      throw new KafkaPartitionError(KafkaErrorCode.LEADER_NOT_AVAILABLE);
    const broker = await this.cluster.findBroker({ nodeId: partition.leader });
    const apiVersion = negotiateVersion(broker, "Produce", PRODUCE_API_KEY, PRODUCE_VERSIONS);
    const api = { apiName: "Produce", apiKey: PRODUCE_API_KEY, apiVersion };
    return { broker, api, connection: await readyConnection(broker, api) };
  }

  /** A produce request's body: its head, then the batch, laid out once in one buffer. */
  async body(
    tp: TopicPartition,
    records: readonly MirrorRecord[],
    stamp: ProvenanceStamp | null,
    identity: ProducerIdentity,
    baseSequence: number,
  ): Promise<Buffer> {
    const topic = Buffer.from(tp.topic, "utf8");
    const head = { acks: -1, timeoutMs: this.options.requestTimeoutMs, topic, partition: tp.partition };
    const batch = {
      compression: this.options.compression,
      producerId: identity.producerId,
      producerEpoch: identity.producerEpoch,
      baseSequence,
      stamp,
    };
    const transactionalId = this.transactions?.transactionalIdOf(tp);
    if (transactionalId === undefined) {
      return writeProduceHead(
        await encodeRecordBatch(records, { ...batch, headroom: produceHeadSize(topic) }),
        head,
      );
    }
    const id = Buffer.from(transactionalId, "utf8");
    return writeTransactionalProduceHead(
      await encodeRecordBatch(records, {
        ...batch,
        isTransactional: true,
        headroom: transactionalProduceHeadSize(topic, id),
      }),
      { ...head, transactionalId: id },
    );
  }

  /**
   * Queues one request on the leader's connection without awaiting anything first, so requests
   * queued in one turn reach the broker in order (pipelining relies on it).
   */
  send(
    leader: Leader & { readonly connection: KafkajsConnection },
    tp: TopicPartition,
    body: Buffer,
  ): Promise<ProducePartitionResponse> {
    const { apiVersion } = leader.api;
    return enqueueBody(
      leader.connection,
      leader.api,
      body,
      (payload) => partitionAnswer(decodeProduceResponse(apiVersion, payload), tp),
      this.options.requestTimeoutMs,
    );
  }

  /** One attempt of a produce request whose body is laid out already. */
  async attempt(tp: TopicPartition, body: Buffer, baseSequence: number): Promise<Attempt> {
    let leader: Awaited<ReturnType<ProducerSession["leader"]>>;
    try {
      leader = await this.leader(tp);
    } catch (error) {
      if (this.closed) throw error;
      return { error, sent: false };
    }
    try {
      this.logger?.debug("produce sent", {
        topic: tp.topic,
        partition: tp.partition,
        baseSequence,
        batches: 1,
        at: this.options.now(),
      });
      return { answer: await this.send(leader, tp, body) };
    } catch (error) {
      return { error, sent: true };
    }
  }

  /** Before a retry: fresh metadata (the leader may have moved), then the backoff, ending by `until`. */
  async pauseBeforeRetry(attempt: number, until: number): Promise<void> {
    await this.connector.refreshMetadata();
    await sleepBeforeRetry(attempt, until, { initialMs: this.options.retryBackoffMs }, this.options.now);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.cluster.disconnect();
  }

  /** Stops new requests at once; close() disconnects once the writes in progress settled. */
  markClosed(): void {
    this.closed = true;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private async initProducerId(deadline: number): Promise<ProducerIdentity> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.connector.connect();
        await this.cluster.refreshMetadataIfNecessary();
        // Non-transactional: any broker may answer; kafkajs's producer asks the controller too.
        const broker = await this.cluster.findControllerBroker();
        const result = await broker.initProducerId({
          transactionalId: null,
          transactionTimeout: this.options.requestTimeoutMs,
        });
        this.logger?.info("producer id assigned", {
          producerId: result.producerId,
          producerEpoch: result.producerEpoch,
        });
        return this.shared.adopt(BigInt(result.producerId), result.producerEpoch);
      } catch (error) {
        if (!isTransient(error) || this.options.now() >= deadline)
          throw translateKafkajsError(error, "InitProducerId");
        await this.pauseBeforeRetry(attempt, deadline);
      }
    }
  }
}
