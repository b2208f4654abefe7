/**
 * What a produce answer means for the batch it answers, and the errors a write ends with. Kept
 * apart from the writer so the pipelined and the one-by-one paths classify answers one way.
 */
import type { MirrorRecord, TopicPartition } from "../core/model.js";
import { isReplicatorError, ReplicatorError } from "../errors.js";
import { isTransientKafkajsError, translateKafkajsError } from "./connection.js";
import { KafkaErrorCode, KafkaPartitionError, kafkaError } from "./error-codes.js";
import type { ProducePartitionResponse, ProduceResponse } from "./protocol/produce.js";

/** The broker refused these records; bisecting a multi-record batch finds the one to blame. */
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

/** Worth another attempt: the broker or the connection failed transiently. */
export function isTransient(error: unknown): boolean {
  if (error instanceof KafkaPartitionError) return error.retriable;
  if (isReplicatorError(error)) return error.retryable && error.code === "KAFKA_RETRIABLE";
  return isTransientKafkajsError(error);
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
export function batchDetails(tp: TopicPartition, records: readonly MirrorRecord[]): Record<string, unknown> {
  return {
    topic: tp.topic,
    partition: tp.partition,
    sourceOffset: records[0]?.offset ?? -1,
    sourceLastOffset: records.at(-1)?.offset ?? -1,
  };
}

/** The broker answered an error code for a batch; the write ends with this. */
export function answerError(
  code: number,
  tp: TopicPartition,
  records: readonly MirrorRecord[],
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
  if (REJECTING_ERRORS.has(code) && records.length === 1) {
    return new ReplicatorError(
      "RECORD_REJECTED",
      `target refused record ${records[0]?.offset ?? -1} for ${tp.topic}/${tp.partition}: ${info.name}`,
      { details },
    );
  }
  return new ReplicatorError(
    info.retriable ? "KAFKA_RETRIABLE" : "KAFKA_FATAL",
    `produce to ${tp.topic}/${tp.partition} failed: ${info.name}${suffix}`,
    { cause: new KafkaPartitionError(code), details },
  );
}

/** A request failed without an answer (timeout, connection lost); the write ends with this. */
export function requestError(
  error: unknown,
  tp: TopicPartition,
  records: readonly MirrorRecord[],
  suffix = "",
): ReplicatorError {
  return translateKafkajsError(
    error,
    `produce to ${tp.topic}/${tp.partition}${suffix}`,
    batchDetails(tp, records),
  );
}
