/**
 * Fenced writes (KIP-98, as MirrorMaker 2's exactly-once mode uses them, KIP-618): every target
 * partition is written by a transactional producer of its own, transactional.id
 * kafka-mirror.<alias>/<topic>/<partition>. A worker that takes a partition over calls
 * InitProducerId for that id before it looks at the target: the coordinator bumps the epoch and
 * aborts the previous holder's open transaction, and the partition leaders refuse that holder's
 * later Produce and EndTxn. However long a former holder was frozen, or however late its request
 * arrives, nothing it sends after the fence becomes visible to read_committed readers.
 *
 * Each write is one transaction: AddPartitionsToTxn, the write's batches (pipelined, sequences
 * continuing within the epoch), EndTxn(commit). A write whose outcome is unknown drops the
 * partition's identity; the next write (or fence) calls InitProducerId again, which aborts the
 * transaction if it is still open. Until then the partition notes that one may be open
 * (mayBeOpen), so its holder can end it before letting the partition go.
 *
 * The transaction timeout is asked for with each InitProducerId: the configured one until the
 * worker settles it against the target brokers' cap at a run's start (useTimeout).
 */
import { partitionKey, type TopicPartition } from "../../core/model.js";
import type { Logger, TransactionTimeout } from "../../core/ports.js";
import { transactionTimeoutRefused } from "../../core/run/transaction-timeout.js";
import { isReplicatorError } from "../../errors.js";
import type { KafkaClusterClient } from "../wire/cluster-client.js";
import { type ProducerIdentity, ProducerState } from "./producer-state.js";
import {
  type TransactionalProducer,
  TransactionCoordinator,
  type TransactionResult,
} from "./transaction-coordinator.js";
import { transactionalIdFor } from "./transactional-id.js";

export interface TransactionProducersOptions {
  /** The target cluster's client, shared with the writer; its clock measures the deadlines. */
  readonly client: KafkaClusterClient;
  readonly alias: string;
  readonly transactionTimeoutMs: number;
  readonly retryBackoffMs: number;
  readonly logger?: Logger;
}

interface PartitionProducer {
  readonly coordinator: TransactionCoordinator;
  /** This partition's identity and sequence: the producer is the partition's own. */
  readonly state: ProducerState;
  initializing: Promise<ProducerIdentity> | undefined;
  /**
   * From AddPartitionsToTxn until its EndTxn succeeded or an InitProducerId (ours or a newer
   * holder's) ended it: a transaction of ours may be open on the partition.
   */
  open: boolean;
  /** The producer id its last InitProducerId (a fence) gave; null before the first. */
  fencedProducerId: bigint | null;
}

export class TransactionProducers {
  readonly #options: TransactionProducersOptions;
  readonly #producers = new Map<string, PartitionProducer>();
  /** Settled by the worker; null: options.transactionTimeoutMs, with no values to name. */
  #timeout: TransactionTimeout | null = null;

  constructor(options: TransactionProducersOptions) {
    this.#options = options;
  }

  /** The transaction timeout later InitProducerIds ask for (identities already held keep theirs). */
  useTimeout(timeout: TransactionTimeout): void {
    this.#timeout = timeout;
  }

  get timeoutMs(): number {
    return this.#timeout?.ms ?? this.#options.transactionTimeoutMs;
  }

  transactionalIdOf(tp: TopicPartition): string {
    return this.#producer(tp).coordinator.transactionalId;
  }

  state(tp: TopicPartition): ProducerState {
    return this.#producer(tp).state;
  }

  /** The partition's current identity, or a new one (which fences earlier writers). */
  identity(tp: TopicPartition, deadline: number): Promise<ProducerIdentity> {
    const producer = this.#producer(tp);
    const current = producer.state.current();
    if (current !== undefined) return Promise.resolve(current);
    producer.initializing ??= this.#init(tp, producer, deadline).finally(() => {
      producer.initializing = undefined;
    });
    return producer.initializing;
  }

  /**
   * A new identity for `tp` whatever it had: InitProducerId bumps the epoch, so every earlier
   * holder of the transactional id (another worker, or this one before an uncertain write) is
   * fenced and its open transaction aborted by the time this resolves.
   */
  async fence(tp: TopicPartition, deadline: number): Promise<ProducerIdentity> {
    const producer = this.#producer(tp);
    await producer.initializing?.catch(() => undefined);
    const current = producer.state.current();
    if (current !== undefined) producer.state.reset(partitionKey(tp), current);
    return this.identity(tp, deadline);
  }

  /** AddPartitionsToTxn: opens the write's transaction on `tp`. */
  begin(tp: TopicPartition, identity: ProducerIdentity, deadline: number): Promise<void> {
    const producer = this.#producer(tp);
    // Before the request: once sent, it may have opened the transaction whatever the answer.
    producer.open = true;
    return producer.coordinator.addPartition(
      this.#transactional(tp, identity),
      tp.topic,
      tp.partition,
      deadline,
    );
  }

  /** EndTxn: commits (or aborts) the write's transaction. */
  async end(
    tp: TopicPartition,
    identity: ProducerIdentity,
    result: TransactionResult,
    deadline: number,
  ): Promise<void> {
    const producer = this.#producer(tp);
    await producer.coordinator.endTransaction(this.#transactional(tp, identity), result, deadline);
    producer.open = false;
  }

  /**
   * The producer id `tp`'s last InitProducerId gave: every batch of ours written since carries it
   * (an epoch bump keeps the id; Kafka gives a new one only when the epoch is exhausted). Kept
   * after a failed write drops the identity, until the next InitProducerId. Null before the first.
   */
  producerIdOf(tp: TopicPartition): bigint | null {
    return this.#producers.get(partitionKey(tp))?.fencedProducerId ?? null;
  }

  /** Whether a transaction of ours may be open on `tp` (see PartitionProducer.open). */
  mayBeOpen(tp: TopicPartition): boolean {
    return this.#producer(tp).open;
  }

  /**
   * Drops `identity` after a failed write, so nothing else is sent under it. Its transaction stays
   * open (mayBeOpen) unless a newer holder fenced us, which ended it.
   */
  forget(tp: TopicPartition, identity: ProducerIdentity, fencedByAnother: boolean): void {
    const producer = this.#producer(tp);
    producer.state.reset(partitionKey(tp), identity);
    if (fencedByAnother) producer.open = false;
  }

  async #init(tp: TopicPartition, producer: PartitionProducer, deadline: number): Promise<ProducerIdentity> {
    const timeoutMs = this.timeoutMs;
    const fresh = await producer.coordinator.initProducer(deadline, timeoutMs).catch((error: unknown) => {
      const timeout = this.#timeout;
      const refused = isReplicatorError(error) && error.details.kafkaError === "INVALID_TRANSACTION_TIMEOUT";
      throw refused && timeout !== null ? transactionTimeoutRefused(timeout, error) : error;
    });
    // The coordinator answers only once it has aborted (or completed) the id's open transaction.
    producer.open = false;
    producer.fencedProducerId = fresh.producerId;
    this.#options.logger?.info("transactional producer initialised (earlier writers fenced)", {
      topic: tp.topic,
      partition: tp.partition,
      transactionalId: fresh.transactionalId,
      producerId: String(fresh.producerId),
      producerEpoch: fresh.producerEpoch,
      transactionTimeoutMs: timeoutMs,
    });
    return producer.state.adopt(fresh.producerId, fresh.producerEpoch);
  }

  #transactional(tp: TopicPartition, identity: ProducerIdentity): TransactionalProducer {
    return {
      transactionalId: this.transactionalIdOf(tp),
      producerId: identity.producerId,
      producerEpoch: identity.producerEpoch,
    };
  }

  #producer(tp: TopicPartition): PartitionProducer {
    const key = partitionKey(tp);
    let producer = this.#producers.get(key);
    if (producer === undefined) {
      const { client, alias, transactionTimeoutMs, retryBackoffMs, logger } = this.#options;
      producer = {
        coordinator: new TransactionCoordinator({
          client,
          transactionalId: transactionalIdFor(alias, tp.topic, tp.partition),
          transactionTimeoutMs,
          retryBackoffMs,
          ...(logger === undefined ? {} : { logger }),
        }),
        state: new ProducerState(),
        initializing: undefined,
        open: false,
        fencedProducerId: null,
      };
      this.#producers.set(key, producer);
    }
    return producer;
  }
}
