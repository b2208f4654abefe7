/**
 * What a produce answer means for the batch it answers, and the errors a write ends with. Kept
 * apart from the writer so the pipelined and the one-by-one paths classify answers one way.
 */
import type { MirrorRecord, TopicPartition } from "../../core/model.js";
import { describeError, isReplicatorError, ReplicatorError } from "../../errors.js";
import { isTransient, translateKafkajsError } from "../wire/connection.js";
import { isFencedCode, KafkaErrorCode, KafkaPartitionError, kafkaError } from "../wire/error-codes.js";
import type { ProducePartitionResponse, ProduceResponse } from "../wire/produce.js";
import type { Attempt } from "./model.js";
import { isSourceBatch, type ProduceBatch, sourceOffsetsOf } from "./produce-batch.js";

/**
 * The broker refused these records; bisecting a multi-record batch finds the one to blame. A source
 * batch (target.copy "batches") cannot be bisected: it is refused as a whole.
 */
export const REJECTING_ERRORS: ReadonlySet<number> = new Set([
  KafkaErrorCode.MESSAGE_TOO_LARGE,
  KafkaErrorCode.RECORD_LIST_TOO_LARGE,
  KafkaErrorCode.CORRUPT_MESSAGE,
  KafkaErrorCode.INVALID_RECORD,
  KafkaErrorCode.INVALID_TIMESTAMP,
]);

/** The broker no longer knows this producer's session (id, epoch, sequence) for the partition. */
export const STATE_LOST_ERRORS: ReadonlySet<number> = new Set([
  KafkaErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
  KafkaErrorCode.UNKNOWN_PRODUCER_ID,
  KafkaErrorCode.INVALID_PRODUCER_EPOCH,
  KafkaErrorCode.PRODUCER_FENCED,
]);

/** Kafka error 20 (see error-codes.ts). */
const NOT_ENOUGH_REPLICAS_AFTER_APPEND = 20;

/**
 * Answers after which the batch may be in the leader's log all the same: acks=all timed out
 * waiting for followers (REQUEST_TIMED_OUT), or the leader appended before the ISR shrank
 * (NOT_ENOUGH_REPLICAS_AFTER_APPEND). Like a request that got no answer, such a batch is only
 * resent with its own producer id and sequence, which the broker de-duplicates.
 */
const MAYBE_APPENDED_ERRORS: ReadonlySet<number> = new Set([
  KafkaErrorCode.REQUEST_TIMED_OUT,
  NOT_ENOUGH_REPLICAS_AFTER_APPEND,
]);

/** The batch is in the log: appended now, or a duplicate of one appended earlier. */
export function isLanded(code: number): boolean {
  return code === KafkaErrorCode.NONE || code === KafkaErrorCode.DUPLICATE_SEQUENCE_NUMBER;
}

/** An answered batch that may have been appended although the answer is an error. */
export function mayHaveAppended(code: number): boolean {
  return MAYBE_APPENDED_ERRORS.has(code);
}

/**
 * After one pipelined attempt: whether the batch may be in the log without our knowing (no
 * answer, or an answer that does not rule it out).
 */
export function isUncertain(answer: PromiseSettledResult<ProducePartitionResponse>): boolean {
  return answer.status === "rejected" || mayHaveAppended(answer.value.errorCode);
}

/** What the writer does after one attempt at a batch. */
export type Verdict =
  | { readonly kind: "landed"; readonly baseOffset: number }
  /** The broker refused some of these records (a batch of them that cannot have landed): split it. */
  | { readonly kind: "bisect"; readonly records: readonly MirrorRecord[] }
  /** Ends the write; `reset`: the batch may be in the log, so its sequence must not be reused. */
  | { readonly kind: "fail"; readonly error: ReplicatorError; readonly reset: boolean }
  | {
      readonly kind: "again";
      /** An attempt so far may have landed: only a resend with the same sequence may follow. */
      readonly uncertain: boolean;
      /** The error to end with when there is no time for another attempt. */
      readonly exhausted: () => ReplicatorError;
      readonly log: Record<string, unknown>;
    };

const EXHAUSTED = " (retries exhausted)";

/** Judges one attempt at a batch; `uncertain`: an earlier attempt of it may have landed. */
export function judgeAttempt(
  result: Attempt,
  tp: TopicPartition,
  records: ProduceBatch,
  uncertain: boolean,
): Verdict {
  if ("error" in result) {
    const maybe = uncertain || result.sent;
    if (!isTransient(result.error))
      return { kind: "fail", error: requestError(result.error, tp, records), reset: maybe };
    const exhausted = () => requestError(result.error, tp, records, EXHAUSTED);
    return { kind: "again", uncertain: maybe, exhausted, log: describeError(result.error) };
  }
  const code = result.answer.errorCode;
  if (isLanded(code))
    return { kind: "landed", baseOffset: code === KafkaErrorCode.NONE ? result.answer.baseOffset : -1 };
  if (STATE_LOST_ERRORS.has(code))
    return { kind: "fail", error: answerError(code, tp, records), reset: true };
  if (REJECTING_ERRORS.has(code)) {
    // Halves get new sequences: only safe while no attempt of the whole may have landed.
    if (uncertain) return { kind: "fail", error: refusedAfterUncertain(code, tp, records), reset: true };
    if (!isSourceBatch(records) && records.length > 1) return { kind: "bisect", records };
    return { kind: "fail", error: answerError(code, tp, records), reset: false };
  }
  if (!kafkaError(code).retriable)
    return { kind: "fail", error: answerError(code, tp, records), reset: uncertain };
  const exhausted = () => answerError(code, tp, records, EXHAUSTED);
  const log = { kafkaError: kafkaError(code).name };
  return { kind: "again", uncertain: uncertain || mayHaveAppended(code), exhausted, log };
}

/** The answer for `tp` inside a produce response. */
export function partitionAnswer(response: ProduceResponse, tp: TopicPartition): ProducePartitionResponse {
  const answer = response.topics
    .find((t) => t.topic === tp.topic)
    ?.partitions.find((p) => p.partition === tp.partition);
  if (answer === undefined) throw new KafkaPartitionError(KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  return answer;
}

/** Topic, partition and the source offsets a batch covers, for error details. */
export function batchDetails(tp: TopicPartition, records: ProduceBatch): Record<string, unknown> {
  const offsets = sourceOffsetsOf(records);
  return {
    topic: tp.topic,
    partition: tp.partition,
    sourceOffset: offsets.first,
    sourceLastOffset: offsets.last,
  };
}

/** The broker answered an error code for a batch; the write ends with this. */
export function answerError(
  code: number,
  tp: TopicPartition,
  records: ProduceBatch,
  suffix = "",
): ReplicatorError {
  const info = kafkaError(code);
  const details = { ...batchDetails(tp, records), kafkaErrorCode: code, kafkaError: info.name };
  if (STATE_LOST_ERRORS.has(code)) {
    return new ReplicatorError(
      "PRODUCER_STATE_LOST",
      `producer state for ${tp.topic}/${tp.partition} lost: ${info.name}${suffix}`,
      { details },
    );
  }
  if (REJECTING_ERRORS.has(code)) {
    const refused = refusedRecordsError(info.name, tp, records, details);
    if (refused !== null) return refused;
  }
  return new ReplicatorError(
    info.retriable ? "KAFKA_RETRIABLE" : "KAFKA_FATAL",
    `produce to ${tp.topic}/${tp.partition} failed: ${info.name}${suffix}`,
    { cause: new KafkaPartitionError(code), details },
  );
}

/** RECORD_REJECTED for a refused source batch or single record; null for records bisection can split. */
function refusedRecordsError(
  name: string,
  tp: TopicPartition,
  records: ProduceBatch,
  details: Record<string, unknown>,
): ReplicatorError | null {
  const where = `${tp.topic}/${tp.partition}: ${name}`;
  if (isSourceBatch(records)) {
    const { baseOffset, lastOffset } = records;
    // The copy's CRC comes from the one the source stored (pass-through.ts): a mismatch is the source's.
    const why =
      name === "CORRUPT_MESSAGE"
        ? "its CRC-32C does not match its bytes: changed at the source or on the way; it is read again after a backoff"
        : "a batch copied as it came cannot be split to find the record";
    const message = `target refused the source batch of offsets ${baseOffset}..${lastOffset} for ${where} (${why})`;
    return new ReplicatorError("RECORD_REJECTED", message, { details });
  }
  if (records.length !== 1) return null;
  const message = `target refused record ${records[0]?.offset ?? -1} for ${where}`;
  return new ReplicatorError("RECORD_REJECTED", message, { details });
}

/** A request failed without an answer (timeout, connection lost); the write ends with this. */
export function requestError(
  error: unknown,
  tp: TopicPartition,
  records: ProduceBatch,
  suffix = "",
): ReplicatorError {
  return translateKafkajsError(
    error,
    `produce to ${tp.topic}/${tp.partition}${suffix}`,
    batchDetails(tp, records),
  );
}

/**
 * A produce refused for its epoch means a newer holder fenced this partition's producer: the
 * caller has lost the partition, whatever its lease says.
 */
export function fencedOr(error: unknown): unknown {
  if (!isReplicatorError(error, "PRODUCER_STATE_LOST")) return error;
  if (!isFencedCode(error.details?.kafkaErrorCode)) return error;
  return new ReplicatorError("PRODUCER_FENCED", `${error.message}: another writer fenced this partition`, {
    cause: error,
    details: error.details,
  });
}

/** An attempt may have landed and the deadline left no time to confirm it by resending. */
export function deadlineError(tp: TopicPartition, records: ProduceBatch): ReplicatorError {
  return new ReplicatorError(
    "KAFKA_RETRIABLE",
    `produce to ${tp.topic}/${tp.partition}: outcome unknown, the write's deadline left no time to resend`,
    { details: batchDetails(tp, records) },
  );
}

/** A resend was refused after an attempt of unknown outcome: the caller must look, then write anew. */
function refusedAfterUncertain(code: number, tp: TopicPartition, records: ProduceBatch): ReplicatorError {
  return new ReplicatorError(
    "KAFKA_RETRIABLE",
    `produce to ${tp.topic}/${tp.partition}: resend refused (${kafkaError(code).name}) after an attempt of unknown outcome`,
    { cause: new KafkaPartitionError(code), details: { ...batchDetails(tp, records), kafkaErrorCode: code } },
  );
}
