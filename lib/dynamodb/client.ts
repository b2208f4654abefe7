/**
 * The one place a DynamoDB client is built (functions, CLI, embedded store, tests, scripts), so
 * every lease-store call is bounded the same way. Without this a call could hang for minutes: the
 * SDK's HTTP handler only *warns* when `requestTimeout` passes unless `throwOnRequestTimeout` is
 * set, and a half-open connection then waits for the OS to give up. A renewal stuck like that
 * outlives the lease it is renewing.
 *
 * Bound per call: LEASE_STORE_MAX_ATTEMPTS × requestTimeoutMs plus the SDK's short backoff. The
 * SDK retries transient failures (timeouts included) within that; the core retries on its next
 * renewal or rebalance tick, so the SDK's count stays small.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { LEASE_STORE_MAX_ATTEMPTS } from "../config/schema.js";

export interface DynamoDbClientOptions {
  /** Time one attempt may take, connection included; a breach fails the attempt (TimeoutError). */
  readonly requestTimeoutMs: number;
  /**
   * Time the TCP (and TLS) connection may take.
   * @default the smaller of requestTimeoutMs and 1 s
   */
  readonly connectionTimeoutMs?: number;
  /** @default LEASE_STORE_MAX_ATTEMPTS */
  readonly maxAttempts?: number;
  /** @default the SDK's: AWS_ENDPOINT_URL_DYNAMODB, else the region's endpoint */
  readonly endpoint?: string;
  /** @default the SDK's: AWS_REGION */
  readonly region?: string;
  /** @default the SDK's credential chain */
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
}

export function createDynamoDbClient(options: DynamoDbClientOptions): DynamoDBClient {
  const requestTimeout = options.requestTimeoutMs;
  return new DynamoDBClient({
    ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
    ...(options.region === undefined ? {} : { region: options.region }),
    ...(options.credentials === undefined ? {} : { credentials: { ...options.credentials } }),
    maxAttempts: options.maxAttempts ?? LEASE_STORE_MAX_ATTEMPTS,
    requestHandler: {
      connectionTimeout: options.connectionTimeoutMs ?? Math.min(requestTimeout, 1_000),
      requestTimeout,
      // Without it the handler logs a warning at requestTimeout and keeps waiting.
      throwOnRequestTimeout: true,
    },
  });
}
