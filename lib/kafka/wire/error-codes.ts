/**
 * Kafka protocol error codes the replicator can meet, with Apache Kafka's names and whether the
 * broker marks them retriable (`RetriableException` in Errors.java). One table, so the reader, the
 * writer and the admin agree on what "retriable" means. Codes not listed are treated as fatal.
 */
const KAFKA_ERRORS = {
  [-1]: ["UNKNOWN_SERVER_ERROR", false],
  0: ["NONE", false],
  1: ["OFFSET_OUT_OF_RANGE", false],
  2: ["CORRUPT_MESSAGE", true],
  3: ["UNKNOWN_TOPIC_OR_PARTITION", true],
  4: ["INVALID_FETCH_SIZE", false],
  5: ["LEADER_NOT_AVAILABLE", true],
  6: ["NOT_LEADER_OR_FOLLOWER", true],
  7: ["REQUEST_TIMED_OUT", true],
  8: ["BROKER_NOT_AVAILABLE", false],
  9: ["REPLICA_NOT_AVAILABLE", true],
  10: ["MESSAGE_TOO_LARGE", false],
  12: ["OFFSET_METADATA_TOO_LARGE", false],
  13: ["NETWORK_EXCEPTION", true],
  14: ["COORDINATOR_LOAD_IN_PROGRESS", true],
  15: ["COORDINATOR_NOT_AVAILABLE", true],
  16: ["NOT_COORDINATOR", true],
  17: ["INVALID_TOPIC_EXCEPTION", false],
  18: ["RECORD_LIST_TOO_LARGE", false],
  19: ["NOT_ENOUGH_REPLICAS", true],
  20: ["NOT_ENOUGH_REPLICAS_AFTER_APPEND", true],
  21: ["INVALID_REQUIRED_ACKS", false],
  22: ["ILLEGAL_GENERATION", false],
  24: ["INVALID_GROUP_ID", false],
  25: ["UNKNOWN_MEMBER_ID", false],
  27: ["REBALANCE_IN_PROGRESS", false],
  28: ["INVALID_COMMIT_OFFSET_SIZE", false],
  30: ["GROUP_AUTHORIZATION_FAILED", false],
  29: ["TOPIC_AUTHORIZATION_FAILED", false],
  31: ["CLUSTER_AUTHORIZATION_FAILED", false],
  32: ["INVALID_TIMESTAMP", false],
  35: ["UNSUPPORTED_VERSION", false],
  36: ["TOPIC_ALREADY_EXISTS", false],
  37: ["INVALID_PARTITIONS", false],
  38: ["INVALID_REPLICATION_FACTOR", false],
  39: ["INVALID_REPLICA_ASSIGNMENT", false],
  40: ["INVALID_CONFIG", false],
  41: ["NOT_CONTROLLER", true],
  42: ["INVALID_REQUEST", false],
  43: ["UNSUPPORTED_FOR_MESSAGE_FORMAT", false],
  44: ["POLICY_VIOLATION", false],
  45: ["OUT_OF_ORDER_SEQUENCE_NUMBER", false],
  46: ["DUPLICATE_SEQUENCE_NUMBER", false],
  47: ["INVALID_PRODUCER_EPOCH", false],
  48: ["INVALID_TXN_STATE", false],
  49: ["INVALID_PRODUCER_ID_MAPPING", false],
  51: ["CONCURRENT_TRANSACTIONS", true],
  56: ["KAFKA_STORAGE_ERROR", true],
  58: ["SASL_AUTHENTICATION_FAILED", false],
  59: ["UNKNOWN_PRODUCER_ID", false],
  60: ["REASSIGNMENT_IN_PROGRESS", false],
  68: ["NON_EMPTY_GROUP", false],
  69: ["GROUP_ID_NOT_FOUND", false],
  70: ["FETCH_SESSION_ID_NOT_FOUND", true],
  71: ["INVALID_FETCH_SESSION_EPOCH", true],
  72: ["LISTENER_NOT_FOUND", true],
  74: ["FENCED_LEADER_EPOCH", true],
  75: ["UNKNOWN_LEADER_EPOCH", true],
  76: ["UNSUPPORTED_COMPRESSION_TYPE", false],
  78: ["OFFSET_NOT_AVAILABLE", true],
  80: ["PREFERRED_LEADER_NOT_AVAILABLE", true],
  83: ["ELIGIBLE_LEADERS_NOT_AVAILABLE", true],
  87: ["INVALID_RECORD", false],
  89: ["THROTTLING_QUOTA_EXCEEDED", true],
  90: ["PRODUCER_FENCED", false],
} as const satisfies Record<number, readonly [string, boolean]>;

export type KafkaErrorName = (typeof KAFKA_ERRORS)[keyof typeof KAFKA_ERRORS][0];

export interface KafkaErrorInfo {
  readonly code: number;
  /** Apache Kafka's name, or `UNKNOWN_KAFKA_ERROR_<code>` for a code not in the table. */
  readonly name: string;
  readonly retriable: boolean;
}

export function kafkaError(code: number): KafkaErrorInfo {
  const entry = (KAFKA_ERRORS as Record<number, readonly [string, boolean] | undefined>)[code];
  if (entry === undefined) return { code, name: `UNKNOWN_KAFKA_ERROR_${code}`, retriable: false };
  return { code, name: entry[0], retriable: entry[1] };
}

/** Numeric codes by name, for the places that branch on one specific error. */
export const KafkaErrorCode = {
  NONE: 0,
  OFFSET_OUT_OF_RANGE: 1,
  CORRUPT_MESSAGE: 2,
  UNKNOWN_TOPIC_OR_PARTITION: 3,
  LEADER_NOT_AVAILABLE: 5,
  NOT_LEADER_OR_FOLLOWER: 6,
  REQUEST_TIMED_OUT: 7,
  MESSAGE_TOO_LARGE: 10,
  COORDINATOR_LOAD_IN_PROGRESS: 14,
  COORDINATOR_NOT_AVAILABLE: 15,
  NOT_COORDINATOR: 16,
  ILLEGAL_GENERATION: 22,
  UNKNOWN_MEMBER_ID: 25,
  REBALANCE_IN_PROGRESS: 27,
  RECORD_LIST_TOO_LARGE: 18,
  NOT_ENOUGH_REPLICAS: 19,
  INVALID_TIMESTAMP: 32,
  TOPIC_ALREADY_EXISTS: 36,
  INVALID_PARTITIONS: 37,
  NOT_CONTROLLER: 41,
  OUT_OF_ORDER_SEQUENCE_NUMBER: 45,
  DUPLICATE_SEQUENCE_NUMBER: 46,
  INVALID_PRODUCER_EPOCH: 47,
  UNKNOWN_PRODUCER_ID: 59,
  NON_EMPTY_GROUP: 68,
  GROUP_ID_NOT_FOUND: 69,
  FENCED_LEADER_EPOCH: 74,
  UNKNOWN_LEADER_EPOCH: 75,
  INVALID_RECORD: 87,
  PRODUCER_FENCED: 90,
} as const satisfies Record<string, number>;

/**
 * A newer holder of the producer's transactional id has a higher epoch: the producer is fenced.
 * Brokers before KIP-588 answer INVALID_PRODUCER_EPOCH, later ones PRODUCER_FENCED.
 */
export function isFencedCode(code: unknown): boolean {
  return code === KafkaErrorCode.INVALID_PRODUCER_EPOCH || code === KafkaErrorCode.PRODUCER_FENCED;
}

/** A Kafka error code returned for one partition of a response, before the caller decides what it means. */
export class KafkaPartitionError extends Error {
  readonly kafkaCode: number;
  readonly retriable: boolean;

  constructor(code: number) {
    const info = kafkaError(code);
    super(info.name);
    this.name = "KafkaPartitionError";
    this.kafkaCode = code;
    this.retriable = info.retriable;
  }
}
