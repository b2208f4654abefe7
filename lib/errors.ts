/**
 * One error type for the whole replicator. Adapters translate library errors at the call site
 * into a ReplicatorError with a code from this closed list and keep the original as `cause`, so
 * the core can decide what to do (retry, stop a partition, give up a lease) without knowing
 * which library failed.
 */
export const ErrorCodes = {
  /** The configuration failed validation; `details` lists every bad field. */
  CONFIG_INVALID: { retryable: false },
  /** A topic-selection pattern is not a valid regular expression. */
  PATTERN_INVALID: { retryable: false },
  /** The target topic has fewer partitions than the source topic. */
  TARGET_PARTITIONS_TOO_FEW: { retryable: false },
  /** Creating a target topic failed for a reason other than "already exists". */
  TOPIC_CREATE_FAILED: { retryable: true },
  /** Reading or setting a topic's configs failed (refused value, unknown config, broker error). */
  TOPIC_CONFIG_FAILED: { retryable: true },
  /** Adding partitions to a topic failed for a reason other than "already has that many". */
  PARTITIONS_CREATE_FAILED: { retryable: true },
  /** The target refused a record (too large, invalid, policy): the partition stops, nothing is skipped. */
  RECORD_REJECTED: { retryable: false },
  /** The idempotent producer's sequence state was lost or rejected; the partition must be restarted. */
  PRODUCER_STATE_LOST: { retryable: true },
  /**
   * The target refused a transactional request because another holder of the same
   * transactional.id has since initialised it (a newer producer epoch): this writer must stop.
   */
  PRODUCER_FENCED: { retryable: false },
  /** A Kafka request failed with an error that may succeed if retried (leader moved, broker down, timeout). */
  KAFKA_RETRIABLE: { retryable: true },
  /** A Kafka request failed with an error that will not go away by retrying. */
  KAFKA_FATAL: { retryable: false },
  /**
   * A broker refused our credentials or SASL mechanism. Not retryable with the same password:
   * the functions re-read the secret (it may have been rotated) and reconnect once.
   */
  AUTHENTICATION_FAILED: { retryable: false },
  /** The requested offset is outside the source partition's log. */
  OFFSET_OUT_OF_RANGE: { retryable: false },
  /**
   * A consumer group's offset cannot be translated into the target exactly: the partition's
   * lease has no offset map (never checkpointed with provenance, or provenance is off).
   */
  OFFSETS_UNTRANSLATABLE: { retryable: false },
  /**
   * A READ_COMMITTED read of the target must reach past another producer's open transaction: it
   * returns nothing from the transaction's first offset (the LSO) until it is committed or
   * aborted. `details` name the partition, the LSO and the offset the read must reach.
   */
  TARGET_TRANSACTION_OPEN: { retryable: true },
  /**
   * target.copy "batches": a copy found in the target is not the source batch it must be (the
   * source changed under the copy), so what landed cannot be told.
   */
  TARGET_COPY_MISMATCH: { retryable: false },
  /** A fetched record batch could not be decoded (bad CRC, unknown codec, unsupported magic). */
  CORRUPT_BATCH: { retryable: false },
  /**
   * The group coordinator refused to commit offsets for a group because it has active members
   * (Kafka answers an admin commit so while anyone is in the group): its live consumers own it.
   */
  GROUP_NOT_EMPTY: { retryable: false },
  /** A consumer-group request (list, describe, fetch or commit offsets) failed; `details.groupId` names the group. */
  GROUP_ADMIN_FAILED: { retryable: true },
  /** The caller no longer holds the lease (taken over, expired or released). */
  LEASE_LOST: { retryable: false },
  /** The lease table could not be reached or throttled us; the operation may be retried. */
  LEASE_STORE_UNAVAILABLE: { retryable: true },
  /** The lease table exists but is not in the expected shape (missing, wrong key schema). */
  LEASE_STORE_INVALID: { retryable: false },
  /**
   * The CLI's state directory (the embedded lease store) cannot be created or used: a path under
   * a file or under /proc, no permission, a read-only file system. `details.path` names where.
   */
  STATE_DIR_UNUSABLE: { retryable: false },
  /** The metrics endpoint (`run --metrics-port`) cannot listen: `details` name the host and port. */
  METRICS_PORT_UNUSABLE: { retryable: false },
  /**
   * A command that only reads leases (status, offsets, failover) found none where it looked: no
   * state directory, no table, or a table without lease items. Reading on would report the whole
   * log as lag and every group offset as untranslatable; `details` name the directory and table.
   */
  LEASE_STATE_MISSING: { retryable: false },
} as const satisfies Record<string, { retryable: boolean }>;

export type ErrorCode = keyof typeof ErrorCodes;

export interface ReplicatorErrorOptions {
  cause?: unknown;
  /** Structured, payload-free facts about the failure (topic, partition, offsets, broker). */
  details?: Record<string, unknown>;
  /** Overrides the code's default retryability where the call site knows better. */
  retryable?: boolean;
}

export class ReplicatorError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly details: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: ReplicatorErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ReplicatorError";
    this.code = code;
    this.retryable = options.retryable ?? ErrorCodes[code].retryable;
    this.details = options.details ?? {};
  }
}

export function isReplicatorError(error: unknown, code?: ErrorCode): error is ReplicatorError {
  return error instanceof ReplicatorError && (code === undefined || error.code === code);
}

/**
 * The log fields of an error: code, message and details of a ReplicatorError (never a payload),
 * name and message of anything else.
 */
export function describeError(error: unknown): Record<string, unknown> {
  if (isReplicatorError(error)) return { code: error.code, error: error.message, details: error.details };
  return { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
}
