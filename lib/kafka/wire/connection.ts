/**
 * What a Kafka connection is made of (KafkaConnectionOptions) and what its failures mean: every
 * kafkajs error crosses into the rest of the code through `translateKafkajsError`, with the
 * original kept as `cause`, and `isTransient` is the one test of "worth another attempt".
 */
import kafkajs from "kafkajs";
import type { Logger } from "../../core/ports.js";
import { isReplicatorError, ReplicatorError } from "../../errors.js";
import { KafkaPartitionError, kafkaError } from "./error-codes.js";
import { isAuthenticationFailure, type KafkaSecurityOptions } from "./security.js";

export interface KafkaConnectionOptions {
  /** `host:port` of one or more bootstrap brokers. */
  readonly brokers: readonly string[];
  /** @default "kafka-mirror" */
  readonly clientId?: string;
  /** @default 10000 */
  readonly connectionTimeoutMs?: number;
  /** @default 30000 */
  readonly requestTimeoutMs?: number;
  /** @default 10000 */
  readonly authenticationTimeoutMs?: number;
  /** Diagnostics from kafkajs (never payloads). @default none */
  readonly logger?: Logger;
  /** TLS options for node's tls.connect, from `kafkaSecurityOptions` (security.ts). @default plaintext */
  readonly ssl?: KafkaSecurityOptions["ssl"];
  /** SASL options, from `kafkaSecurityOptions` (security.ts). @default none */
  readonly sasl?: KafkaSecurityOptions["sasl"];
}

export const DEFAULT_CLIENT_ID = "kafka-mirror";

/** Errors kafkajs raises when a broker connection broke or timed out: retry after a metadata refresh. */
const TRANSIENT_KAFKAJS_ERRORS = new Set([
  "KafkaJSConnectionError",
  "KafkaJSConnectionClosedError",
  "KafkaJSRequestTimeoutError",
  "KafkaJSBrokerNotFound",
  "KafkaJSLockTimeout",
  "KafkaJSMetadataNotLoaded",
  "KafkaJSTopicMetadataNotLoaded",
  "KafkaJSStaleTopicMetadataAssignment",
  "KafkaJSNumberOfRetriesExceeded",
]);

/**
 * kafkajs throws this plain Error when a request is built on a Broker whose connect has not yet
 * finished (or that a concurrent metadata refresh has just replaced): a connection state, not a
 * fault of the request.
 */
const BROKER_NOT_CONNECTED = "Broker not connected";

export function isTransientKafkajsError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (TRANSIENT_KAFKAJS_ERRORS.has(error.name)) return true;
  if (error instanceof kafkajs.KafkaJSConnectionError) return true;
  if (error.name === "Error" && error.message === BROKER_NOT_CONNECTED) return true;
  const code = protocolErrorCode(error);
  if (code !== undefined) return kafkaError(code).retriable || isRetriableKafkajsError(error);
  return isRetriableKafkajsError(error);
}

/**
 * Worth another attempt: a partition error Kafka marks retriable, a KAFKA_RETRIABLE failure, or
 * a kafkajs connection or timeout error. The one answer for the reader, writer and admin.
 */
export function isTransient(error: unknown): boolean {
  if (error instanceof KafkaPartitionError) return error.retriable;
  if (isReplicatorError(error)) return error.retryable && error.code === "KAFKA_RETRIABLE";
  return isTransientKafkajsError(error);
}

/** kafkajs marks the errors it would retry itself; its own retrier is off, so ours takes over. */
function isRetriableKafkajsError(error: Error): boolean {
  return error instanceof kafkajs.KafkaJSError && error.retriable;
}

/** The Kafka error code carried by a KafkaJSProtocolError or a KafkaPartitionError, if any. */
export function protocolErrorCode(error: unknown): number | undefined {
  if (error instanceof KafkaPartitionError) return error.kafkaCode;
  if (error instanceof Error && "code" in error && "type" in error && typeof error.code === "number") {
    return error.code;
  }
  return undefined;
}

/**
 * Wraps any error from a kafkajs call into a ReplicatorError (AUTHENTICATION_FAILED when a broker
 * refused our credentials, else KAFKA_RETRIABLE or KAFKA_FATAL), leaving ReplicatorErrors as they
 * are. The refusal gets its own code so the functions can see it in a run summary and re-read a
 * rotated secret without knowing kafkajs.
 */
export function translateKafkajsError(error: unknown, what: string, details: Record<string, unknown> = {}) {
  if (error instanceof ReplicatorError) return error;
  const code = protocolErrorCode(error);
  const name = error instanceof Error ? error.name : "Error";
  const kafkaName = code === undefined ? undefined : kafkaError(code).name;
  const reason = kafkaName ?? (error instanceof Error ? `${name}: ${error.message}` : String(error));
  return new ReplicatorError(
    isAuthenticationFailure(error)
      ? "AUTHENTICATION_FAILED"
      : isTransientKafkajsError(error)
        ? "KAFKA_RETRIABLE"
        : "KAFKA_FATAL",
    `${what} failed: ${reason}`,
    {
      cause: error,
      details: { ...details, ...(code === undefined ? {} : { kafkaErrorCode: code, kafkaError: kafkaName }) },
    },
  );
}
