/**
 * Who sends the target writer's produce requests: the cluster connection, leader lookup, the
 * producer identity (InitProducerId) and sequences, and the encoding and sending of one produce
 * request. The writer (target-writer.ts) decides what to send and when.
 *
 * Two kinds of identity: without fencing, one idempotent producer serves every partition; with
 * fencing, each target partition has a transactional producer of its own
 * (transaction-producers.ts), whose InitProducerId fences every earlier writer of the partition.
 */

import type { CompressionCodec } from "../../config/compression.js";
import type { TopicPartition } from "../../core/model.js";
import type { Logger } from "../../core/ports.js";
import type { ProvenanceStamp } from "../../core/provenance.js";
import { backoffDelay } from "../../core/retry.js";
import { ReplicatorError } from "../../errors.js";
import { rewriteForProduce } from "../codec/pass-through.js";
import { encodeRecordBatch } from "../codec/record-batch.js";
import type {
  BodyApi,
  Broker,
  BrokerConnection,
  KafkaClusterClient,
  RequestBody,
} from "../wire/cluster-client.js";
import { isTransient, translateKafkajsError } from "../wire/connection.js";
import { brokerRequests } from "../wire/kafkajs-internals.js";
import {
  decodeProduceResponse,
  PRODUCE_API_KEY,
  PRODUCE_VERSIONS,
  type ProducePartitionResponse,
  produceHeadSize,
  writeProduceHead,
} from "../wire/produce.js";
import { kafkaBackoff, retryKafka } from "../wire/retry.js";
import {
  transactionalProduceHeadSize,
  writeTransactionalProduceHead,
} from "../wire/transactional-produce.js";
import type { Attempt } from "./model.js";
import { isSourceBatch, type ProduceBatch } from "./produce-batch.js";
import { partitionAnswer } from "./produce-outcome.js";
import { type ProducerIdentity, ProducerState } from "./producer-state.js";
import { TransactionProducers } from "./transaction-producers.js";

export interface ProducerSessionOptions {
  /** The target cluster's client; its clock and request timeout are the session's. */
  readonly client: KafkaClusterClient;
  readonly compression: CompressionCodec;
  readonly retryBackoffMs: number;
  /** Fenced writes: one transactional producer per target partition. Null: one idempotent producer. */
  readonly transactions: TransactionSettings | null;
  readonly logger?: Logger;
}

export interface TransactionSettings {
  /** The source alias: transactional ids are kafka-mirror.<alias>/<topic>/<partition>. */
  readonly alias: string;
  /** transaction.timeout.ms: the coordinator aborts a transaction left open longer. */
  readonly transactionTimeoutMs: number;
}

/** A partition's leader and the Produce version to speak to it. */
export interface Leader {
  readonly broker: Broker;
  readonly api: BodyApi;
  readonly connection: BrokerConnection;
}

export class ProducerSession {
  /** The idempotent producer's state (no fencing). */
  readonly #shared = new ProducerState();
  readonly #client: KafkaClusterClient;
  readonly #options: ProducerSessionOptions;
  /** Per-partition transactional producers (fencing); null without fencing. */
  readonly transactions: TransactionProducers | null;
  #initializing: Promise<ProducerIdentity> | undefined;
  #closed = false;

  constructor(options: ProducerSessionOptions) {
    this.#options = options;
    this.#client = options.client;
    this.transactions =
      options.transactions === null
        ? null
        : new TransactionProducers({
            client: this.#client,
            ...options.transactions,
            retryBackoffMs: options.retryBackoffMs,
            ...(options.logger === undefined ? {} : { logger: options.logger }),
          });
  }

  get #logger(): Logger | undefined {
    return this.#options.logger;
  }

  /** Sequences of `tp`'s batches under its producer identity. */
  state(tp: TopicPartition): ProducerState {
    return this.transactions?.state(tp) ?? this.#shared;
  }

  /**
   * The producer identity `tp` is written with, asking the cluster for one (until `deadline`)
   * when there is none. With fencing that InitProducerId fences earlier writers of `tp`.
   */
  identity(tp: TopicPartition, deadline: number): Promise<ProducerIdentity> {
    if (this.transactions !== null) return this.transactions.identity(tp, deadline);
    const current = this.#shared.current();
    if (current !== undefined) return Promise.resolve(current);
    this.#initializing ??= this.#initProducerId(deadline).finally(() => {
      this.#initializing = undefined;
    });
    return this.#initializing;
  }

  /** The partition's leader as metadata has it, connected and authenticated. */
  async leader(tp: TopicPartition): Promise<Leader> {
    if (this.#closed) throw new ReplicatorError("KAFKA_FATAL", "target writer is closed");
    const broker = await this.#client.broker(await this.#client.leaderFor(tp));
    const apiVersion = this.#client.negotiate(broker, "Produce", PRODUCE_API_KEY, PRODUCE_VERSIONS);
    const api = { apiName: "Produce", apiKey: PRODUCE_API_KEY, apiVersion };
    return { broker, api, connection: await this.#client.connection(broker, api) };
  }

  /**
   * A produce request's body: its head, then the batch: records encoded into one buffer after
   * the head, or a source batch's records as fetched after the head and its rewritten header
   * (codec/pass-through.ts).
   */
  async body(
    tp: TopicPartition,
    batch: ProduceBatch,
    stamp: ProvenanceStamp | null,
    identity: ProducerIdentity,
    baseSequence: number,
  ): Promise<RequestBody> {
    const topic = Buffer.from(tp.topic, "utf8");
    const head = { acks: -1, timeoutMs: this.#client.requestTimeoutMs, topic, partition: tp.partition };
    const transactionalId = this.transactions?.transactionalIdOf(tp);
    const id = transactionalId === undefined ? null : Buffer.from(transactionalId, "utf8");
    const { producerId, producerEpoch } = identity;
    const fields = { producerId, producerEpoch, baseSequence, transactional: id !== null };
    const headroom = id === null ? produceHeadSize(topic) : transactionalProduceHeadSize(topic, id);
    const laidOut = isSourceBatch(batch)
      ? rewriteForProduce(batch.bytes, fields, headroom)
      : await encodeRecordBatch(batch, {
          compression: this.#options.compression,
          producerId,
          producerEpoch,
          baseSequence,
          stamp,
          ...(id === null ? {} : { isTransactional: true }),
          headroom,
        });
    if (id === null) return writeProduceHead(laidOut, head);
    return writeTransactionalProduceHead(laidOut, { ...head, transactionalId: id });
  }

  /**
   * Queues one request on the leader's connection without awaiting anything first, so requests
   * queued in one turn reach the broker in order (pipelining relies on it).
   */
  send(leader: Leader, tp: TopicPartition, body: RequestBody): Promise<ProducePartitionResponse> {
    const { apiVersion } = leader.api;
    return this.#client.enqueue(leader.connection, leader.api, body, (payload) =>
      partitionAnswer(decodeProduceResponse(apiVersion, payload), tp),
    );
  }

  /** One attempt of a produce request whose body is laid out already. */
  async attempt(tp: TopicPartition, body: RequestBody, baseSequence: number): Promise<Attempt> {
    let leader: Leader;
    try {
      leader = await this.leader(tp);
    } catch (error) {
      if (this.#closed) throw error;
      return { error, sent: false };
    }
    try {
      this.#logger?.debug("produce sent", {
        topic: tp.topic,
        partition: tp.partition,
        baseSequence,
        batches: 1,
        at: this.#client.clock.now(),
      });
      return { answer: await this.send(leader, tp, body) };
    } catch (error) {
      return { error, sent: true };
    }
  }

  /**
   * The one pause of the writer before it sends again: fresh metadata (the leader may have
   * moved), then the backoff, cut to end by `until`.
   */
  async pauseBeforeRetry(attempt: number, until: number): Promise<void> {
    await this.#client.refreshMetadata();
    const { clock } = this.#client;
    const delay = backoffDelay(attempt, kafkaBackoff(this.#options.retryBackoffMs));
    await clock.sleep(Math.min(delay, Math.max(0, until - clock.now())));
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#client.disconnect();
  }

  /** Stops new requests at once; close() disconnects once the writes in progress settled. */
  markClosed(): void {
    this.#closed = true;
  }

  get isClosed(): boolean {
    return this.#closed;
  }

  /** InitProducerId without a transactional id, tried again on transient failures until `deadline`. */
  async #initProducerId(deadline: number): Promise<ProducerIdentity> {
    const { clock } = this.#client;
    const result = await retryKafka(
      async (n) => {
        if (n > 0) await this.#client.refreshMetadata();
        // Non-transactional: any broker may answer; kafkajs's producer asks the controller too.
        return brokerRequests.initProducerId(await this.#client.controller(), {
          transactionalId: null,
          transactionTimeout: this.#client.requestTimeoutMs,
        });
      },
      this.#options.retryBackoffMs,
      { clock, retryable: isTransient, deadline },
    ).catch((error: unknown) => {
      throw translateKafkajsError(error, "InitProducerId");
    });
    this.#logger?.info("producer id assigned", {
      producerId: result.producerId,
      producerEpoch: result.producerEpoch,
    });
    return this.#shared.adopt(BigInt(result.producerId), result.producerEpoch);
  }
}
