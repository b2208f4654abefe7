/**
 * TargetWriter: an idempotent producer (acks=all) that sends record batches we encode ourselves,
 * or source batches as they came but for our producer fields (target.copy "batches",
 * produce-batch.ts), over kafkajs's broker connections. A write's batches go out in groups of up to five, in order on
 * one connection, as Kafka's idempotent producer allows: the broker appends a producer's batches
 * to a partition only in sequence order, so whatever lands is always a prefix of the write. What
 * did not land is then sent again one batch at a time.
 *
 * Resends rely on the broker's idempotent de-duplication, and only in this form: a batch whose
 * attempt may have landed (no answer in time, connection lost mid-request, an acks=all timeout:
 * on Kafka such a batch is usually in the leader's log already and shows once followers catch up)
 * is resent with its identical bytes, producer id and sequence, so the broker drops it if it is a
 * duplicate. When the producer session is gone (UNKNOWN_PRODUCER_ID, OUT_OF_ORDER_SEQUENCE_NUMBER,
 * INVALID_PRODUCER_EPOCH, ...) or the deadline leaves no time to resend, the write rejects: its
 * outcome is unknown and the caller must look at the target before writing those records again.
 *
 * Every write is bounded by its deadline (TargetWriter.write): no request is sent unless it is
 * answered, or has timed out, by then. Out of time before a batch that cannot have landed, the
 * write resolves with the acknowledged prefix. With fencing each write is one transaction, and
 * its bounds and what a failed one leaves open are in transactional-write.ts.
 */

import type { CompressionCodec } from "../../config/compression.js";
import { systemClock } from "../../core/clock.js";
import {
  type CopyUnits,
  isBatches,
  type MirrorRecord,
  partitionKey,
  type TopicPartition,
  type WriteResult,
} from "../../core/model.js";
import type {
  Clock,
  Logger,
  OpenTransactionEnd,
  TargetWriter,
  TransactionTimeout,
  WriteDeadline,
} from "../../core/ports.js";
import type { ProvenanceStamp } from "../../core/provenance.js";
import { ReplicatorError } from "../../errors.js";
import { answerPool } from "../wire/answer-pool.js";
import { type ClusterClientOptions, KafkaClusterClient } from "../wire/cluster-client.js";
import { splitIntoBatches } from "./batch-split.js";
import { NOT_PIPELINED, type PipelineContext, sendPipelined } from "./pipelined-send.js";
import { type ProduceBatch, recordsIn, recordsInAll } from "./produce-batch.js";
import { batchDetails, deadlineError, judgeAttempt } from "./produce-outcome.js";
import { ProducerSession, type TransactionSettings } from "./producer-session.js";
import type { ProducerIdentity } from "./producer-state.js";
import type { TransactionProducers } from "./transaction-producers.js";
import { endOpenTransaction, type TransactionalWriter, writeTransaction } from "./transactional-write.js";

export interface KafkaPartitionWriterOptions extends ClusterClientOptions {
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
  /**
   * How long, within one write, a batch that certainly did not land is sent again after a
   * transient error before the write fails with KAFKA_RETRIABLE; the write's deadline bounds it
   * too. This is the writer's part of one bounded write (ports.ts, "Retries"); after the write
   * fails, the pump decides. 0: a batch is sent once. @default 30000
   */
  readonly retryDeadlineMs?: number;
  /** First retry delay; doubles per attempt. @default 100 */
  readonly retryBackoffMs?: number;
  /**
   * Fenced writes: every write is a transaction of the target partition's own transactional
   * producer (see transaction-producers.ts). Null: one idempotent producer, and only the lease
   * keeps writers apart. @default null
   */
  readonly transactions?: TransactionSettings | null;
}

/** What one group or batch achieved: its leading records the target acknowledged. */
interface Sent {
  /** Target offset of the first record; -1 when unknown or nothing landed. */
  readonly baseOffset: number;
  readonly acknowledged: number;
}

/** How the one-by-one path (re)sends a batch. */
interface Resend {
  /** Keep the session of an earlier attempt (same producer id, so the broker can de-duplicate). */
  readonly identity?: ProducerIdentity | undefined;
  /** An earlier attempt of this batch may have landed: the write may not stop before it is confirmed. */
  readonly mayHaveLanded: boolean;
}

const NOTHING_SENT: Sent = { baseOffset: -1, acknowledged: 0 };
const NO_DEADLINE: WriteDeadline = () => Number.POSITIVE_INFINITY;

export class KafkaPartitionWriter implements TargetWriter {
  readonly #session: ProducerSession;
  /** Tail of each partition's chain of writes: one batch in flight per partition. */
  readonly #tails = new Map<string, Promise<unknown>>();
  readonly #maxBatchBytes: number;
  readonly #maxBatchRecords: number;
  readonly #maxInFlightBatches: number;
  readonly #retryDeadlineMs: number;
  readonly #requestTimeoutMs: number;
  readonly #logger: Logger | undefined;
  readonly #clock: Clock;
  readonly #now: () => number;

  constructor(options: KafkaPartitionWriterOptions) {
    this.#maxBatchBytes = options.maxBatchBytes ?? 1024 * 1024;
    this.#maxBatchRecords = options.maxBatchRecords ?? 10_000;
    this.#maxInFlightBatches = checkedInFlight(options.maxInFlightBatches ?? MAX_IN_FLIGHT_BATCHES);
    this.#retryDeadlineMs = options.retryDeadlineMs ?? 30_000;
    this.#logger = options.logger;
    const client = new KafkaClusterClient({ ...options, clock: options.clock ?? systemClock });
    this.#requestTimeoutMs = client.requestTimeoutMs;
    this.#clock = client.clock;
    this.#now = () => client.clock.now();
    this.#session = new ProducerSession({
      client,
      compression: options.compression ?? "none",
      retryBackoffMs: options.retryBackoffMs ?? 100,
      transactions: options.transactions ?? null,
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    });
  }

  get fences(): boolean {
    return this.#session.transactions !== null;
  }

  /**
   * Records go out in batches of up to maxBatchBytes and maxBatchRecords; source batches
   * (target.copy "batches") one produce batch each, whatever their size, and never with a stamp.
   */
  write(
    tp: TopicPartition,
    units: CopyUnits,
    stamp: ProvenanceStamp | null = null,
    deadline: WriteDeadline = NO_DEADLINE,
    runDeadline: number = Number.POSITIVE_INFINITY,
  ): Promise<WriteResult> {
    if (isBatches(units) && stamp !== null) {
      return Promise.reject(new TypeError("source batches are copied as they came: they take no stamp"));
    }
    const batches: readonly ProduceBatch[] = isBatches(units)
      ? units
      : splitIntoBatches(units, this.#maxBatchBytes, this.#maxBatchRecords, stamp);
    const records = recordsInAll(batches);
    const written = this.#inTurn(tp, () => {
      const transactions = this.#session.transactions;
      if (transactions === null) return this.#writeInOrder(tp, batches, records, stamp, deadline);
      return writeTransaction(
        this.#transactional(transactions),
        tp,
        { lease: deadline, run: runDeadline },
        (bounded) => this.#writeInOrder(tp, batches, records, stamp, bounded),
        records,
      );
    });
    if (!isBatches(units)) return written;
    return written.then((result) => {
      // Landed whole (committed, with fencing) where we know: nothing sends these bytes again, so
      // their answer buffers may be read into again. The rest of a partial write is resent from
      // them, and so may be a write whose base offset is unknown (the pump looks at the target).
      if (result.acknowledged === records && result.baseOffset >= 0) answerPool.done(units);
      return result;
    });
  }

  #transactional(transactions: TransactionProducers): TransactionalWriter {
    return {
      transactions,
      clock: this.#clock,
      requestTimeoutMs: this.#requestTimeoutMs,
      retryDeadlineMs: this.#retryDeadlineMs,
      logger: this.#logger,
    };
  }

  /**
   * Without fencing there is nothing to do: the lease alone keeps writers apart. With fencing,
   * InitProducerId for the partition's transactional id, in turn with the partition's writes.
   */
  fence(tp: TopicPartition, deadline: WriteDeadline = NO_DEADLINE): Promise<void> {
    const transactions = this.#session.transactions;
    if (transactions === null) return Promise.resolve();
    return this.#inTurn(tp, async () => {
      // Retries end a request timeout before the deadline, so the last attempt ends by it.
      const until = Math.min(this.#now() + this.#retryDeadlineMs, deadline() - this.#requestTimeoutMs);
      await transactions.fence(tp, until);
    });
  }

  /** The producer id of `tp`'s transactional producer since its last InitProducerId (a fence). */
  producerId(tp: TopicPartition): bigint | null {
    return this.#session.transactions?.producerIdOf(tp) ?? null;
  }

  endOpenTransaction(tp: TopicPartition, deadline: WriteDeadline): Promise<OpenTransactionEnd> {
    const transactions = this.#session.transactions;
    if (transactions === null) return Promise.resolve("none");
    return this.#inTurn(tp, () => endOpenTransaction(this.#transactional(transactions), tp, deadline));
  }

  useTransactionTimeout(timeout: TransactionTimeout): void {
    this.#session.transactions?.useTimeout(timeout);
  }

  /** Runs `job` after every earlier write and fence of `tp` settled: one at a time per partition. */
  #inTurn<T>(tp: TopicPartition, job: () => Promise<T>): Promise<T> {
    const key = partitionKey(tp);
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const run = previous.then(job, job);
    const tail = run.catch(() => undefined);
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return run;
  }

  async close(): Promise<void> {
    this.#session.markClosed();
    await Promise.allSettled([...this.#tails.values()]);
    await this.#session.close();
  }

  async #writeInOrder(
    tp: TopicPartition,
    batches: readonly ProduceBatch[],
    records: number,
    stamp: ProvenanceStamp | null,
    deadline: WriteDeadline,
  ): Promise<WriteResult> {
    let baseOffset: number | null = null;
    let acknowledged = 0;
    for (let i = 0; i < batches.length; i += this.#maxInFlightBatches) {
      const group = batches.slice(i, i + this.#maxInFlightBatches);
      const sent = await this.#sendGroup(tp, group, stamp, deadline);
      if (sent.acknowledged > 0) baseOffset ??= sent.baseOffset;
      acknowledged += sent.acknowledged;
      if (sent.acknowledged < recordsInAll(group)) {
        this.#logger?.info("write stopped at its deadline", {
          topic: tp.topic,
          partition: tp.partition,
          records,
          acknowledged,
        });
        break;
      }
    }
    return { baseOffset: baseOffset ?? -1, records, acknowledged };
  }

  /**
   * One group: pipelined when it has several batches, then what did not land one batch at a time,
   * with retries and, for a record the broker refuses, bisection. The sequences continue where the
   * landed batches ended, so a batch resent here carries the same bytes and sequence as in the
   * pipeline. Stops early only at a batch nothing of which may have landed.
   */
  async #sendGroup(
    tp: TopicPartition,
    group: readonly ProduceBatch[],
    stamp: ProvenanceStamp | null,
    deadline: WriteDeadline,
  ): Promise<Sent> {
    const pipelined =
      group.length > 1 ? await sendPipelined(this.#pipeline(deadline), tp, group, stamp) : NOT_PIPELINED;
    let acknowledged = recordsInAll(group.slice(0, pipelined.landed));
    let baseOffset = pipelined.landed > 0 ? pipelined.baseOffset : null;
    for (let k = pipelined.landed; k < group.length; k++) {
      const batch: ProduceBatch = group[k] ?? [];
      // After an uncertain batch the broker appended nothing later (sequence order), so only the
      // batch's own answer tells whether it may have landed.
      const sent = await this.#sendBatch(tp, batch, stamp, deadline, {
        identity: pipelined.identity,
        mayHaveLanded: pipelined.uncertain[k] === true,
      });
      if (sent.acknowledged > 0) baseOffset ??= sent.baseOffset;
      acknowledged += sent.acknowledged;
      if (sent.acknowledged < recordsIn(batch)) break;
    }
    return { baseOffset: baseOffset ?? -1, acknowledged };
  }

  #pipeline(deadline: WriteDeadline): PipelineContext {
    return {
      session: this.#session,
      identityDeadline: this.#now() + this.#retryDeadlineMs,
      fits: () => this.#fits(deadline),
      now: this.#now,
      logger: this.#logger,
    };
  }

  /**
   * Sends one batch until acknowledged; every resend carries the same bytes, producer id and
   * sequence, so the broker drops it if an earlier attempt landed after all. Resolves with all of
   * it acknowledged, or none of it when the deadline leaves no time to send it and no attempt may
   * have landed. Rejects when the outcome is unknown (an attempt may have landed and cannot be
   * confirmed: deadline, retries exhausted, producer session lost) or on a non-retryable answer.
   */
  async #sendBatch(
    tp: TopicPartition,
    batch: ProduceBatch,
    stamp: ProvenanceStamp | null,
    deadline: WriteDeadline,
    resend: Resend,
  ): Promise<Sent> {
    const giveUpAt = this.#now() + this.#retryDeadlineMs;
    const session = this.#session;
    const identity = resend.identity ?? (await session.identity(tp, giveUpAt));
    const key = partitionKey(tp);
    const baseSequence = session.state(tp).nextSequence(key, identity);
    const body = await session.body(tp, batch, stamp, identity, baseSequence);
    let uncertain = resend.mayHaveLanded;
    for (let attempt = 0; ; attempt++) {
      if (!this.#fits(deadline)) {
        if (!uncertain) return NOTHING_SENT;
        // The batch may be in the log: its sequence must not carry other records later.
        session.state(tp).reset(key, identity);
        throw deadlineError(tp, batch);
      }
      const verdict = judgeAttempt(await session.attempt(tp, body, baseSequence), tp, batch, uncertain);
      if (verdict.kind === "landed") {
        const count = recordsIn(batch);
        session.state(tp).acknowledged(key, identity, baseSequence, count);
        return { baseOffset: verdict.baseOffset, acknowledged: count };
      }
      if (verdict.kind === "bisect") return this.#sendHalves(tp, verdict.records, stamp, deadline, identity);
      if (verdict.kind === "fail" || this.#now() >= giveUpAt) {
        const failure =
          verdict.kind === "fail" ? verdict : { error: verdict.exhausted(), reset: verdict.uncertain };
        if (failure.reset) session.state(tp).reset(key, identity);
        throw failure.error;
      }
      uncertain = verdict.uncertain;
      this.#logger?.debug("produce retry", { ...batchDetails(tp, batch), attempt, ...verdict.log });
      await session.pauseBeforeRetry(attempt, Math.min(giveUpAt, deadline() - this.#requestTimeoutMs));
    }
  }

  /** The broker refused the batch without consuming its sequence; find the record to blame. */
  async #sendHalves(
    tp: TopicPartition,
    records: readonly MirrorRecord[],
    stamp: ProvenanceStamp | null,
    deadline: WriteDeadline,
    identity: ProducerIdentity,
  ): Promise<Sent> {
    const middle = Math.ceil(records.length / 2);
    const first = await this.#sendBatch(tp, records.slice(0, middle), stamp, deadline, {
      identity,
      mayHaveLanded: false,
    });
    if (first.acknowledged < middle) return first;
    const second = await this.#sendBatch(tp, records.slice(middle), stamp, deadline, {
      identity,
      mayHaveLanded: false,
    });
    return { baseOffset: first.baseOffset, acknowledged: first.acknowledged + second.acknowledged };
  }

  /** A request sent now is answered, or has timed out, by the deadline. */
  #fits(deadline: WriteDeadline): boolean {
    return this.#now() + this.#requestTimeoutMs <= deadline();
  }
}

/**
 * Unacknowledged batches per partition whose order an idempotent producer keeps (Kafka's limit on
 * max.in.flight.requests.per.connection with idempotence on); also the broker's de-duplication
 * window per producer and partition, which every resend of a group stays inside.
 */
const MAX_IN_FLIGHT_BATCHES = 5;

/** maxInFlightBatches, checked: 1..MAX_IN_FLIGHT_BATCHES. */
function checkedInFlight(value: number): number {
  if (Number.isInteger(value) && value >= 1 && value <= MAX_IN_FLIGHT_BATCHES) return value;
  throw new ReplicatorError(
    "CONFIG_INVALID",
    `maxInFlightBatches must be an integer from 1 to ${MAX_IN_FLIGHT_BATCHES}, got ${value}`,
    { details: { maxInFlightBatches: value } },
  );
}
