/**
 * What a run logs when a partition's pump stopped on a non-retryable error (the pump counts it
 * in metrics.partitionError; failure-backoff.ts decides when it is tried again). Every failure
 * is an error log naming the partition, the code and this worker's backoff, except a failure
 * that is a setting no retry can change (configProblem): that is said once per run at error
 * level, naming the setting, and its repeats are info lines. The retries go on all the same
 * (the setting may be fixed meanwhile) and the metric counts each; the log stays readable.
 */
import type { ReplicatorError } from "../../errors.js";
import type { PartitionRoute } from "../plan/model.js";
import type { Logger } from "../ports.js";
import type { Backoff } from "./failure-backoff.js";

export interface ConfigProblem {
  /** What the problem is said once per run for (the setting and where it lives). */
  readonly key: string;
  /** What to change, in the operator's words. */
  readonly fix: string;
}

/**
 * The setting to change when `error` is one no retry can fix: the target topic refusing our
 * records (RECORD_REJECTED, by the Kafka error behind it), or the target brokers refusing the
 * transaction timeout we ask for (transaction-timeout.ts; its error names the values).
 * Null for anything else.
 */
export function configProblem(error: ReplicatorError, route: PartitionRoute): ConfigProblem | null {
  const kafkaError = typeof error.details.kafkaError === "string" ? error.details.kafkaError : null;
  const topic = route.target.topic;
  if (kafkaError === "INVALID_TRANSACTION_TIMEOUT") {
    return {
      key: kafkaError,
      fix:
        "the target brokers refuse the transaction timeout (3 x leases.durationMs, at most 15 min, never below " +
        "leases.durationMs + 2 x target.requestTimeoutMs) as above their transaction.max.timeout.ms: raise " +
        "transaction.max.timeout.ms on the target brokers, lower leases.durationMs, or set target.fencing: none " +
        "(no fencing of frozen workers)",
    };
  }
  if (error.code !== "RECORD_REJECTED") return null;
  const key = `${kafkaError ?? error.code}:${topic}`;
  switch (kafkaError) {
    case "MESSAGE_TOO_LARGE":
    case "RECORD_LIST_TOO_LARGE":
      return {
        key,
        fix:
          `target topic ${topic} refuses a record as too large: raise max.message.bytes on ${topic} (or the ` +
          "target brokers' message.max.bytes), or set target.compression for records that were compressed on the source " +
          '(with target.copy "batches", to a codec at least as strong as the source batches\')',
      };
    case "INVALID_TIMESTAMP":
      return {
        key,
        fix: `target topic ${topic} refuses a record's timestamp: let its message.timestamp.* settings accept the source's timestamps`,
      };
    case "CORRUPT_MESSAGE":
      // A batch that failed the target's CRC check: changed on the way, or stored so at the
      // source. No setting is to blame; reading it again may pass (pass-through.ts).
      return null;
    case "INVALID_RECORD":
      return {
        key,
        fix: `target topic ${topic} refuses a record as invalid: a compacted target (cleanup.policy=compact) needs a key on every record; match the source topic's cleanup.policy`,
      };
    default:
      return {
        key,
        fix: `target topic ${topic} refuses a record: compare its configs with the source topic's (kafka-mirror plan shows the drift)`,
      };
  }
}

export class FailureReport {
  readonly #logger: Logger;
  /** ConfigProblem keys said this run. */
  readonly #told = new Set<string>();

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  failed(route: PartitionRoute, error: ReplicatorError, backoff: Backoff, now: number): void {
    const fields = {
      ...route.source,
      targetTopic: route.target.topic,
      code: error.code,
      error: error.message,
      details: error.details,
      failures: backoff.failures,
      retryInMs: backoff.until - now,
    };
    const problem = configProblem(error, route);
    if (problem === null) {
      this.#logger.error(
        "partition stopped on error; released, this worker retries it after a backoff",
        fields,
      );
    } else if (!this.#told.has(problem.key)) {
      this.#told.add(problem.key);
      this.#logger.error("partition stopped on a setting no retry can change; retried until it is fixed", {
        ...fields,
        fix: problem.fix,
      });
    } else {
      this.#logger.info("partition stopped again on the setting reported earlier this run", fields);
    }
  }
}
