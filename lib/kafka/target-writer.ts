/**
 * TargetWriter: an idempotent producer (acks=all) that sends record batches we encode ourselves
 * over kafkajs's broker connections. A write's batches go out in groups of up to five, in order on
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
 * write resolves with the acknowledged prefix.
 */
import { type MirrorRecord, partitionKey, type TopicPartition, type WriteResult } from "../core/model.js";
import type { Logger, TargetWriter, WriteDeadline } from "../core/ports.js";
import type { ProvenanceStamp } from "../core/provenance.js";
import { describeError, isReplicatorError, ReplicatorError } from "../errors.js";
import { splitIntoBatches } from "./batch-split.js";
import type { CompressionCodec } from "./compression.js";
import type { KafkaConnectionOptions } from "./connection.js";
import { isFencedCode, KafkaErrorCode, KafkaPartitionError, kafkaError } from "./error-codes.js";
import {
  answerError,
  batchDetails,
  isLanded,
  isTransient,
  isUncertain,
  mayHaveAppended,
  REJECTING_ERRORS,
  requestError,
  STATE_LOST_ERRORS,
} from "./produce-outcome.js";
import { ProducerSession, type TransactionSettings } from "./producer-session.js";
import { type ProducerIdentity, sequenceAfter } from "./producer-state.js";
import type { TransactionProducers } from "./transaction-producers.js";

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
  /**
   * How long one batch is retried on transient errors before KAFKA_RETRIABLE; a write's deadline
   * bounds its retries too. 0: a batch is sent once. @default 30000
   */
  readonly retryDeadlineMs?: number;
  /** First retry delay; doubles per attempt. @default 100 */
  readonly retryBackoffMs?: number;
  /** The clock write deadlines are read against (epoch ms); the caller's, so both agree. @default Date.now */
  readonly now?: () => number;
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

/** One pipelined attempt at a group. */
interface Pipelined {
  /** The session the group was (or was to be) sent under; its resends keep it. */
  readonly identity: ProducerIdentity | undefined;
  /** Leading batches that landed. */
  readonly landed: number;
  readonly baseOffset: number;
  /** Per batch: it may be in the log although no answer says so. */
  readonly uncertain: readonly boolean[];
}

/** How the one-by-one path (re)sends a batch. */
interface Resend {
  /** Keep the session of an earlier attempt (same producer id, so the broker can de-duplicate). */
  readonly identity?: ProducerIdentity | undefined;
  /** An earlier attempt of this batch may have landed: the write may not stop before it is confirmed. */
  readonly mayHaveLanded: boolean;
}

const NOT_PIPELINED: Pipelined = { identity: undefined, landed: 0, baseOffset: -1, uncertain: [] };
const NOTHING_SENT: Sent = { baseOffset: -1, acknowledged: 0 };
const NO_DEADLINE: WriteDeadline = () => Number.POSITIVE_INFINITY;

export class KafkaTargetWriter implements TargetWriter {
  private readonly session: ProducerSession;
  /** Tail of each partition's chain of writes: one batch in flight per partition. */
  private readonly tails = new Map<string, Promise<unknown>>();
  private readonly maxBatchBytes: number;
  private readonly maxBatchRecords: number;
  private readonly maxInFlightBatches: number;
  private readonly retryDeadlineMs: number;
  private readonly requestTimeoutMs: number;
  private readonly logger: Logger | undefined;
  private readonly now: () => number;

  constructor(options: KafkaTargetWriterOptions) {
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
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.logger = options.logger;
    this.now = options.now ?? Date.now;
    this.session = new ProducerSession({
      ...options,
      compression: options.compression ?? "none",
      requestTimeoutMs: this.requestTimeoutMs,
      retryBackoffMs: options.retryBackoffMs ?? 100,
      now: this.now,
      transactions: options.transactions ?? null,
    });
  }

  write(
    tp: TopicPartition,
    records: readonly MirrorRecord[],
    stamp: ProvenanceStamp | null = null,
    deadline: WriteDeadline = NO_DEADLINE,
  ): Promise<WriteResult> {
    return this.inTurn(tp, () => {
      const transactions = this.session.transactions;
      return transactions === null
        ? this.writeInOrder(tp, records, stamp, deadline)
        : this.writeTransaction(transactions, tp, records, stamp, deadline);
    });
  }

  /**
   * Without fencing there is nothing to do: the lease alone keeps writers apart. With fencing,
   * InitProducerId for the partition's transactional id, in turn with the partition's writes.
   */
  fence(tp: TopicPartition, deadline: WriteDeadline = NO_DEADLINE): Promise<void> {
    const transactions = this.session.transactions;
    if (transactions === null) return Promise.resolve();
    return this.inTurn(tp, async () => {
      // Retries end a request timeout before the deadline, so the last attempt ends by it.
      const until = Math.min(this.now() + this.retryDeadlineMs, deadline() - this.requestTimeoutMs);
      await transactions.fence(tp, until);
    });
  }

  /** Runs `job` after every earlier write and fence of `tp` settled: one at a time per partition. */
  private inTurn<T>(tp: TopicPartition, job: () => Promise<T>): Promise<T> {
    const key = partitionKey(tp);
    const previous = this.tails.get(key) ?? Promise.resolve();
    const run = previous.then(job, job);
    const tail = run.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return run;
  }

  /**
   * One write as one transaction. What the write acknowledged (all of it, or the prefix a deadline
   * cut it to) is committed; the commit is attempted even past the write's deadline, which is
   * safe: a writer that fenced us in the meantime has the commit refused, and one that fences us
   * later sees it when it looks. Any failure drops the identity, so the next write or fence
   * starts a new epoch, which also aborts this transaction if it is still open.
   */
  private async writeTransaction(
    transactions: TransactionProducers,
    tp: TopicPartition,
    records: readonly MirrorRecord[],
    stamp: ProvenanceStamp | null,
    deadline: WriteDeadline,
  ): Promise<WriteResult> {
    const identity = await transactions.identity(tp, this.now() + this.retryDeadlineMs);
    try {
      await transactions.begin(tp, identity, Math.min(deadline(), this.now() + this.retryDeadlineMs));
      const result = await this.writeInOrder(tp, records, stamp, deadline);
      const outcome = result.acknowledged > 0 ? "commit" : "abort";
      await transactions.end(tp, identity, outcome, this.now() + this.retryDeadlineMs);
      return result;
    } catch (error) {
      transactions.forget(tp, identity);
      throw fencedOr(error);
    }
  }

  async close(): Promise<void> {
    this.session.markClosed();
    await Promise.allSettled([...this.tails.values()]);
    await this.session.close();
  }

  private async writeInOrder(
    tp: TopicPartition,
    records: readonly MirrorRecord[],
    stamp: ProvenanceStamp | null,
    deadline: WriteDeadline,
  ): Promise<WriteResult> {
    const batches = splitIntoBatches(records, this.maxBatchBytes, this.maxBatchRecords, stamp);
    let baseOffset: number | null = null;
    let acknowledged = 0;
    for (let i = 0; i < batches.length; i += this.maxInFlightBatches) {
      const group = batches.slice(i, i + this.maxInFlightBatches);
      const sent = await this.sendGroup(tp, group, stamp, deadline);
      if (sent.acknowledged > 0) baseOffset ??= sent.baseOffset;
      acknowledged += sent.acknowledged;
      if (sent.acknowledged < recordCount(group)) {
        this.logger?.info("write stopped at its deadline", {
          topic: tp.topic,
          partition: tp.partition,
          records: records.length,
          acknowledged,
        });
        break;
      }
    }
    return { baseOffset: baseOffset ?? -1, records: records.length, acknowledged };
  }

  /**
   * One group: pipelined when it has several batches, then what did not land one batch at a time,
   * with retries and, for a record the broker refuses, bisection. The sequences continue where the
   * landed batches ended, so a batch resent here carries the same bytes and sequence as in the
   * pipeline. Stops early only at a batch nothing of which may have landed.
   */
  private async sendGroup(
    tp: TopicPartition,
    group: readonly (readonly MirrorRecord[])[],
    stamp: ProvenanceStamp | null,
    deadline: WriteDeadline,
  ): Promise<Sent> {
    const pipelined = group.length > 1 ? await this.sendPipelined(tp, group, stamp, deadline) : NOT_PIPELINED;
    let acknowledged = recordCount(group.slice(0, pipelined.landed));
    let baseOffset = pipelined.landed > 0 ? pipelined.baseOffset : null;
    for (let k = pipelined.landed; k < group.length; k++) {
      const batch = group[k] ?? [];
      // After an uncertain batch the broker appended nothing later (sequence order), so only the
      // batch's own answer tells whether it may have landed.
      const sent = await this.sendBatch(tp, batch, stamp, deadline, {
        identity: pipelined.identity,
        mayHaveLanded: pipelined.uncertain[k] === true,
      });
      if (sent.acknowledged > 0) baseOffset ??= sent.baseOffset;
      acknowledged += sent.acknowledged;
      if (sent.acknowledged < batch.length) break;
    }
    return { baseOffset: baseOffset ?? -1, acknowledged };
  }

  /**
   * One attempt at sending `group` (at most maxInFlightBatches batches) back to back on the
   * leader's connection, if it can finish before the deadline. Never throws: whatever did not
   * land is left to the one-by-one path, with a note of which batches may have landed anyway.
   */
  private async sendPipelined(
    tp: TopicPartition,
    group: readonly (readonly MirrorRecord[])[],
    stamp: ProvenanceStamp | null,
    deadline: WriteDeadline,
  ): Promise<Pipelined> {
    const session = this.session;
    if (session.isClosed) return NOT_PIPELINED;
    let identity: ProducerIdentity;
    let leader: Awaited<ReturnType<ProducerSession["leader"]>>;
    try {
      identity = await session.identity(tp, this.now() + this.retryDeadlineMs);
      leader = await session.leader(tp);
    } catch {
      return NOT_PIPELINED;
    }
    const key = partitionKey(tp);
    const sequences: number[] = [];
    const bodies: Buffer[] = [];
    let sequence = session.state(tp).nextSequence(key, identity);
    for (const batch of group) {
      sequences.push(sequence);
      bodies.push(await session.body(tp, batch, stamp, identity, sequence));
      sequence = sequenceAfter(sequence, batch.length);
    }
    // Checked after encoding, just before sending: none of these may be outstanding at the deadline.
    if (!this.fits(deadline)) return { ...NOT_PIPELINED, identity };
    this.logger?.debug("produce sent", {
      ...sentFields(tp, sequences[0] ?? 0, group.length),
      at: this.now(),
    });
    // Queued in one turn, so they reach the broker in sequence order.
    const answers = await Promise.allSettled(bodies.map((body) => session.send(leader, tp, body)));
    // The broker appends a producer's batches only in sequence order: an acknowledged batch means
    // every batch before it landed too, whatever their own answers said (a timed-out request may
    // have landed all the same).
    let landed = 0;
    answers.forEach((answer, k) => {
      if (answer.status === "fulfilled" && isLanded(answer.value.errorCode)) landed = k + 1;
    });
    if (landed > 0) {
      session
        .state(tp)
        .acknowledged(key, identity, sequences[landed - 1] as number, group[landed - 1]?.length ?? 0);
    }
    const first = answers[0];
    const baseOffset =
      landed > 0 && first?.status === "fulfilled" && first.value.errorCode === KafkaErrorCode.NONE
        ? first.value.baseOffset
        : -1;
    return { identity, landed, baseOffset, uncertain: answers.map(isUncertain) };
  }

  /**
   * Sends one batch until acknowledged; every resend carries the same bytes, producer id and
   * sequence, so the broker drops it if an earlier attempt landed after all. Resolves with all of
   * it acknowledged, or none of it when the deadline leaves no time to send it and no attempt may
   * have landed. Rejects when the outcome is unknown (an attempt may have landed and cannot be
   * confirmed: deadline, retries exhausted, producer session lost) or on a non-retryable answer.
   */
  private async sendBatch(
    tp: TopicPartition,
    records: readonly MirrorRecord[],
    stamp: ProvenanceStamp | null,
    deadline: WriteDeadline,
    resend: Resend,
  ): Promise<Sent> {
    const retryUntil = this.now() + this.retryDeadlineMs;
    const session = this.session;
    const identity = resend.identity ?? (await session.identity(tp, retryUntil));
    const key = partitionKey(tp);
    const baseSequence = session.state(tp).nextSequence(key, identity);
    const body = await session.body(tp, records, stamp, identity, baseSequence);
    let uncertain = resend.mayHaveLanded;
    const giveUp = (error: ReplicatorError): ReplicatorError => {
      // The batch may be in the log: its sequence must not carry other records later.
      if (uncertain) session.state(tp).reset(key, identity);
      return error;
    };

    for (let attempt = 0; ; attempt++) {
      if (!this.fits(deadline)) {
        if (!uncertain) return NOTHING_SENT;
        throw giveUp(deadlineError(tp, records));
      }
      const result = await session.attempt(tp, body, baseSequence);
      if ("error" in result) {
        uncertain ||= result.sent;
        if (!isTransient(result.error)) throw giveUp(requestError(result.error, tp, records));
        if (this.now() >= retryUntil)
          throw giveUp(requestError(result.error, tp, records, " (retries exhausted)"));
        this.logger?.debug("produce retry", {
          ...batchDetails(tp, records),
          attempt,
          ...describeError(result.error),
        });
        await session.pauseBeforeRetry(attempt, Math.min(retryUntil, deadline() - this.requestTimeoutMs));
        continue;
      }

      const code = result.answer.errorCode;
      if (isLanded(code)) {
        session.state(tp).acknowledged(key, identity, baseSequence, records.length);
        return {
          baseOffset: code === KafkaErrorCode.NONE ? result.answer.baseOffset : -1,
          acknowledged: records.length,
        };
      }
      if (STATE_LOST_ERRORS.has(code)) {
        session.state(tp).reset(key, identity);
        throw answerError(code, tp, records);
      }
      if (REJECTING_ERRORS.has(code)) {
        // Halves get new sequences: only safe while no attempt of the whole may have landed.
        if (uncertain) throw giveUp(refusedAfterUncertain(code, tp, records));
        if (records.length > 1) return this.sendHalves(tp, records, stamp, deadline, identity);
        throw answerError(code, tp, records);
      }
      if (!kafkaError(code).retriable) throw giveUp(answerError(code, tp, records));
      uncertain ||= mayHaveAppended(code);
      if (this.now() >= retryUntil) throw giveUp(answerError(code, tp, records, " (retries exhausted)"));
      this.logger?.debug("produce retry", {
        ...batchDetails(tp, records),
        attempt,
        kafkaError: kafkaError(code).name,
      });
      await session.pauseBeforeRetry(attempt, Math.min(retryUntil, deadline() - this.requestTimeoutMs));
    }
  }

  /** The broker refused the batch without consuming its sequence; find the record to blame. */
  private async sendHalves(
    tp: TopicPartition,
    records: readonly MirrorRecord[],
    stamp: ProvenanceStamp | null,
    deadline: WriteDeadline,
    identity: ProducerIdentity,
  ): Promise<Sent> {
    const middle = Math.ceil(records.length / 2);
    const first = await this.sendBatch(tp, records.slice(0, middle), stamp, deadline, {
      identity,
      mayHaveLanded: false,
    });
    if (first.acknowledged < middle) return first;
    const second = await this.sendBatch(tp, records.slice(middle), stamp, deadline, {
      identity,
      mayHaveLanded: false,
    });
    return { baseOffset: first.baseOffset, acknowledged: first.acknowledged + second.acknowledged };
  }

  /** A request sent now is answered, or has timed out, by the deadline. */
  private fits(deadline: WriteDeadline): boolean {
    return this.now() + this.requestTimeoutMs <= deadline();
  }
}

/**
 * Unacknowledged batches per partition whose order an idempotent producer keeps (Kafka's limit on
 * max.in.flight.requests.per.connection with idempotence on); also the broker's de-duplication
 * window per producer and partition, which every resend of a group stays inside.
 */
const MAX_IN_FLIGHT_BATCHES = 5;

/**
 * A produce refused for its epoch means a newer holder fenced this partition's producer: the
 * caller has lost the partition, whatever its lease says.
 */
function fencedOr(error: unknown): unknown {
  if (!isReplicatorError(error, "PRODUCER_STATE_LOST")) return error;
  if (!isFencedCode(error.details?.kafkaErrorCode)) return error;
  return new ReplicatorError("PRODUCER_FENCED", `${error.message}: another writer fenced this partition`, {
    cause: error,
    details: error.details,
  });
}

/** An attempt may have landed and the deadline left no time to confirm it by resending. */
function deadlineError(tp: TopicPartition, records: readonly MirrorRecord[]): ReplicatorError {
  return new ReplicatorError(
    "KAFKA_RETRIABLE",
    `produce to ${tp.topic}/${tp.partition}: outcome unknown, the write's deadline left no time to resend`,
    { details: batchDetails(tp, records) },
  );
}

/** A resend was refused after an attempt of unknown outcome: the caller must look, then write anew. */
function refusedAfterUncertain(
  code: number,
  tp: TopicPartition,
  records: readonly MirrorRecord[],
): ReplicatorError {
  return new ReplicatorError(
    "KAFKA_RETRIABLE",
    `produce to ${tp.topic}/${tp.partition}: resend refused (${kafkaError(code).name}) after an attempt of unknown outcome`,
    { cause: new KafkaPartitionError(code), details: { ...batchDetails(tp, records), kafkaErrorCode: code } },
  );
}

function sentFields(tp: TopicPartition, baseSequence: number, batches: number): Record<string, unknown> {
  return { topic: tp.topic, partition: tp.partition, baseSequence, batches };
}

function recordCount(batches: readonly (readonly MirrorRecord[])[]): number {
  return batches.reduce((n, batch) => n + batch.length, 0);
}
