/**
 * Builds a kafkajs Cluster from our options and translates kafkajs errors into ReplicatorError.
 * Every kafkajs error crosses into the rest of the code through `translateKafkajsError`, with the
 * original kept as `cause`.
 */
import kafkajs from "kafkajs";
import type { Logger } from "../core/ports.js";
import { describeError, ReplicatorError } from "../errors.js";
import { KafkaPartitionError, kafkaError } from "./error-codes.js";
import {
  Cluster,
  createLogger,
  createSocketFactory,
  type KafkajsBroker,
  type KafkajsCluster,
  type KafkajsConnection,
  type KafkajsLogEntry,
  type KafkajsQueuedResponse,
  type KafkajsRequest,
  type KafkajsResponse,
  LEVELS,
} from "./kafkajs-internals.js";
import type { KafkaSecurityOptions } from "./security.js";

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

export function createKafkaCluster(options: KafkaConnectionOptions): KafkajsCluster {
  const requestTimeout = options.requestTimeoutMs ?? 30_000;
  return new Cluster({
    logger: kafkajsLogger(options.logger),
    socketFactory: createSocketFactory(),
    brokers: [...options.brokers],
    clientId: options.clientId ?? DEFAULT_CLIENT_ID,
    ...(options.ssl === undefined ? {} : { ssl: options.ssl }),
    ...(options.sasl === undefined ? {} : { sasl: options.sasl }),
    // kafkajs has no usable defaults below its Kafka class: without these the first connect fails
    // at once with "Connection timeout".
    connectionTimeout: options.connectionTimeoutMs ?? 10_000,
    authenticationTimeout: options.authenticationTimeoutMs ?? 10_000,
    requestTimeout,
    enforceRequestTimeout: true,
    metadataMaxAge: 300_000,
    // Our callers retry with their own deadlines; kafkajs's own retrier would multiply them.
    retry: { retries: 0 },
    // A metadata request must never create the topic it asks about on the source cluster.
    allowAutoTopicCreation: false,
    maxInFlightRequests: null,
    isolationLevel: 1,
  });
}

/** Forwards kafkajs's warnings and errors to our logger (exported for its tests). */
export function kafkajsLogger(logger: Logger | undefined) {
  if (logger === undefined) return createLogger({ level: LEVELS.NOTHING, logCreator: () => () => {} });
  return createLogger({
    level: LEVELS.WARN,
    logCreator: () => (entry: KafkajsLogEntry) => {
      // Only the message and the broker: kafkajs's extra fields may carry request data.
      const fields = { namespace: entry.namespace, broker: entry.log.broker };
      const message = `kafkajs: ${entry.log.message}`;
      if (isHandledResponseError(entry)) logger.debug(message, fields);
      else if (entry.level <= LEVELS.ERROR) logger.error(message, fields);
      else logger.warn(message, fields);
    },
  });
}

const RESPONSE_ERROR = /^Response \w+\(key: \d+, version: \d+\)$/;

/**
 * kafkajs's Connection logs every error response at ERROR (e.g. CreateTopics answering
 * TOPIC_ALREADY_EXISTS) and then throws the same error to the caller. Our call sites translate
 * and decide on every such error, so the log line is noise that would page operators.
 */
function isHandledResponseError(entry: KafkajsLogEntry): boolean {
  return (
    entry.level === LEVELS.ERROR && entry.namespace === "Connection" && RESPONSE_ERROR.test(entry.log.message)
  );
}

/**
 * One connect at a time per cluster, shared by every concurrent caller. kafkajs reports a cluster
 * connected as soon as the seed broker's socket is open, before its ApiVersions round trip has
 * set up request lookup; a caller that trusted `isConnected()` then failed with "Broker not
 * connected". So an in-flight connect is always awaited, whatever `isConnected()` says.
 */
export class ClusterConnector {
  private pending: Promise<void> | undefined;

  constructor(
    private readonly cluster: KafkajsCluster,
    private readonly logger?: Logger,
  ) {}

  /**
   * Reloads metadata after a leader moved or a broker went away. Failures are only logged: the
   * retried request fails on its own if the cluster is still unreachable, with a better error.
   */
  async refreshMetadata(): Promise<void> {
    try {
      await this.connect();
      await this.cluster.refreshMetadata();
    } catch (error) {
      this.logger?.debug("metadata refresh failed", { ...describeError(error) });
    }
  }

  connect(): Promise<void> {
    if (this.pending !== undefined) return this.pending;
    if (this.cluster.isConnected()) return Promise.resolve();
    const pending = this.cluster.connect().finally(() => {
      if (this.pending === pending) this.pending = undefined;
    });
    this.pending = pending;
    return pending;
  }
}

/**
 * Sends one of our request definitions over a kafkajs broker connection. `versions` lists the
 * versions we implement, newest first; the best one the broker supports is used.
 */
export async function sendRequest<T>(
  broker: KafkajsBroker,
  apiName: string,
  apiKey: number,
  implemented: readonly number[],
  build: (version: number) => { request: KafkajsRequest; response: KafkajsResponse<T> },
  requestTimeout: number,
): Promise<T> {
  const version = negotiateVersion(broker, apiName, apiKey, implemented);
  const { request, response } = build(version);
  return broker.connectionPool.send({ request, response, requestTimeout });
}

/**
 * Sends a request whose body is already laid out in one buffer, e.g. a produce request around
 * record batches. kafkajs frames a body by copying it twice, each time into a fresh zero-filled
 * buffer of the next power of two: for 1 MiB of records, 4 MiB allocated and 2 MiB copied per
 * produce. Here the frame header (size, API key and version, correlation id, client id) gets a
 * buffer of its own and both go to the socket in one corked write, so the body is never copied.
 * What kafkajs 2.2.4's Connection.send does around the bytes is kept: SASL (re)authentication
 * first, the connection's request queue (in-flight limit, correlation, timeouts, rejection when
 * the socket closes); only its debug logging is left out.
 */
export async function sendBody<T>(
  broker: KafkajsBroker,
  api: BodyApi,
  body: Buffer,
  decode: (payload: Buffer) => T,
  requestTimeout: number,
): Promise<T> {
  return enqueueBody(await readyConnection(broker, api), api, body, decode, requestTimeout);
}

export interface BodyApi {
  readonly apiName: string;
  readonly apiKey: number;
  readonly apiVersion: number;
}

/** The broker connection kafkajs uses for `api`, connected and authenticated. */
export async function readyConnection(broker: KafkajsBroker, api: BodyApi): Promise<KafkajsConnection> {
  const connection = await broker.connectionPool.getConnectionByRequest({ request: api });
  if (!connection.isAuthenticated()) await connection.authenticate();
  return connection;
}

/**
 * Queues one request on a ready connection without awaiting anything first: requests queued in
 * one turn reach the socket in the order they were queued, which pipelined produce requests of
 * one partition rely on.
 */
export function enqueueBody<T>(
  connection: KafkajsConnection,
  api: BodyApi,
  body: Buffer,
  decode: (payload: Buffer) => T,
  requestTimeout: number,
): Promise<T> {
  return new Promise<KafkajsQueuedResponse>((resolve, reject) => {
    connection.failIfNotConnected();
    const clientId = Buffer.from(connection.clientId, "utf8");
    const header = Buffer.allocUnsafe(4 + 2 + 2 + 4 + 2 + clientId.length);
    const correlationId = connection.nextCorrelationId();
    let at = header.writeInt32BE(header.length - 4 + body.length, 0);
    at = header.writeInt16BE(api.apiKey, at);
    at = header.writeInt16BE(api.apiVersion, at);
    at = header.writeInt32BE(correlationId, at);
    at = header.writeInt16BE(clientId.length, at);
    clientId.copy(header, at);
    connection.requestQueue.push({
      entry: { ...api, correlationId, resolve, reject },
      expectResponse: true,
      requestTimeout,
      sendRequest: () => {
        const { socket } = connection;
        socket.cork();
        socket.write(header);
        socket.write(body);
        socket.uncork();
      },
    });
  }).then(({ payload }) => decode(payload));
}

export function negotiateVersion(
  broker: KafkajsBroker,
  apiName: string,
  apiKey: number,
  implemented: readonly number[],
): number {
  const range = broker.versions?.[apiKey];
  const version = implemented.find(
    (v) => range !== undefined && v >= range.minVersion && v <= range.maxVersion,
  );
  if (version === undefined) {
    throw new ReplicatorError(
      "KAFKA_FATAL",
      `broker ${broker.nodeId} does not support ${apiName} v${implemented.join("/v")}`,
      {
        details: { broker: broker.nodeId, apiName, supported: range ?? null },
      },
    );
  }
  return version;
}

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
 * Wraps any error from a kafkajs call into a ReplicatorError (KAFKA_RETRIABLE or KAFKA_FATAL),
 * leaving ReplicatorErrors as they are.
 */
export function translateKafkajsError(error: unknown, what: string, details: Record<string, unknown> = {}) {
  if (error instanceof ReplicatorError) return error;
  const code = protocolErrorCode(error);
  const name = error instanceof Error ? error.name : "Error";
  const kafkaName = code === undefined ? undefined : kafkaError(code).name;
  const reason = kafkaName ?? (error instanceof Error ? `${name}: ${error.message}` : String(error));
  return new ReplicatorError(
    isTransientKafkajsError(error) ? "KAFKA_RETRIABLE" : "KAFKA_FATAL",
    `${what} failed: ${reason}`,
    {
      cause: error,
      details: { ...details, ...(code === undefined ? {} : { kafkaErrorCode: code, kafkaError: kafkaName }) },
    },
  );
}
