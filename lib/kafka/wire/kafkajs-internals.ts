/**
 * The only file that calls kafkajs 2.2.4 below its public API (shapes in kafkajs-types.ts): it
 * builds the Cluster, reads its metadata and leaders, negotiates versions with a Broker, sends
 * requests over its connection pool and queues pre-framed bodies on a connection's request queue.
 * Policy (when to connect, refresh, re-route) lives in cluster-client.ts; nothing here retries.
 */
import { createRequire } from "node:module";
import type { TopicPartition } from "../../core/model.js";
import type { Logger } from "../../core/ports.js";
import { ReplicatorError } from "../../errors.js";
import { answerPool } from "./answer-pool.js";
import { DEFAULT_CLIENT_ID, type KafkaConnectionOptions } from "./connection.js";
import { KafkaErrorCode, KafkaPartitionError } from "./error-codes.js";
import { framedSocketFactory, type SocketFactory } from "./framed-socket.js";
import { tolerateLeaderlessPartitions } from "./kafkajs-metadata.js";
import {
  COORDINATOR_TYPE,
  type KafkajsBroker,
  type KafkajsCall,
  type KafkajsCluster,
  type KafkajsClusterOptions,
  type KafkajsConnection,
  type KafkajsDecoder,
  type KafkajsEncoder,
  type KafkajsLogEntry,
  type KafkajsLogger,
  type KafkajsMetadata,
  type KafkajsQueuedResponse,
} from "./kafkajs-types.js";

export type * from "./kafkajs-types.js";
export { COORDINATOR_TYPE } from "./kafkajs-types.js";

const require = createRequire(import.meta.url);

interface EncoderConstructor {
  new (): KafkajsEncoder;
}
interface DecoderConstructor {
  new (buffer: Buffer): KafkajsDecoder;
}
interface ClusterConstructor {
  new (options: KafkajsClusterOptions): KafkajsCluster;
}

export const Encoder = require("kafkajs/src/protocol/encoder.js") as EncoderConstructor;
export const Decoder = require("kafkajs/src/protocol/decoder.js") as DecoderConstructor;

const Cluster = require("kafkajs/src/cluster/index.js") as ClusterConstructor;
const createSocketFactory = require("kafkajs/src/network/socketFactory.js") as () => SocketFactory;
const { createLogger, LEVELS } = require("kafkajs/src/loggers/index.js") as {
  createLogger(options: {
    level: number;
    logCreator: (level: number) => (entry: KafkajsLogEntry) => void;
  }): KafkajsLogger;
  LEVELS: { NOTHING: number; ERROR: number; WARN: number; INFO: number; DEBUG: number };
};

interface ConnectionPrototype {
  connect(this: object): Promise<boolean>;
  processData(this: { chunks: Buffer[] }, data: Buffer): void;
  [CONNECT_ONCE]?: true;
  [WHOLE_FRAMES]?: true;
}
const CONNECT_ONCE = Symbol.for("kafka-mirror.connect-once");
const WHOLE_FRAMES = Symbol.for("kafka-mirror.whole-frames");
const Connection = require("kafkajs/src/network/connection.js") as { prototype: ConnectionPrototype };

/**
 * kafkajs 2.2.4's Connection.connect() opens a new socket whenever it is called before the
 * connection is up, and its ConnectionPool calls it from every request that finds the connection
 * down. After a broker restart, N requests to it in the same moment opened N sockets; the
 * connection kept the last and its disconnect() ended only that one, so the others stayed open
 * for the life of the process (chaos workers on real Kafka finished their run and never exited).
 * Connects of one connection that overlap now share the first one's socket. Patched on the
 * prototype because kafkajs's own requests (its Broker's typed calls) reach connect() too.
 */
function connectOnce(prototype: ConnectionPrototype): void {
  if (prototype[CONNECT_ONCE]) return;
  const connect = prototype.connect;
  const inFlight = new WeakMap<object, Promise<boolean>>();
  prototype.connect = function (this: object): Promise<boolean> {
    const pending = inFlight.get(this);
    if (pending !== undefined) return pending;
    const attempt = connect.call(this).finally(() => inFlight.delete(this));
    inFlight.set(this, attempt);
    return attempt;
  };
  prototype[CONNECT_ONCE] = true;
}
connectOnce(Connection.prototype);

/**
 * kafkajs 2.2.4's Connection.processData keeps the empty rest of each response as a chunk, so the
 * next response, even one that arrives whole (framed-socket.ts), is copied by Buffer.concat: a
 * copy of every fetched byte. The empty rest is dropped before the next chunk is added.
 */
function wholeFrames(prototype: ConnectionPrototype): void {
  if (prototype[WHOLE_FRAMES]) return;
  const processData = prototype.processData;
  prototype.processData = function (this: { chunks: Buffer[] }, data: Buffer): void {
    if (this.chunks.length === 1 && this.chunks[0]?.length === 0) this.chunks = [];
    processData.call(this, data);
  };
  prototype[WHOLE_FRAMES] = true;
}
wholeFrames(Connection.prototype);

export function createKafkaCluster(options: KafkaConnectionOptions): KafkajsCluster {
  tolerateLeaderlessPartitions();
  return new Cluster({
    logger: kafkajsLogger(options.logger),
    socketFactory: framedSocketFactory(createSocketFactory()),
    brokers: [...options.brokers],
    clientId: options.clientId ?? DEFAULT_CLIENT_ID,
    ...(options.ssl === undefined ? {} : { ssl: options.ssl }),
    ...(options.sasl === undefined ? {} : { sasl: options.sasl }),
    // kafkajs has no usable defaults below its Kafka class: without these the first connect fails
    // at once with "Connection timeout".
    connectionTimeout: options.connectionTimeoutMs ?? 10_000,
    authenticationTimeout: options.authenticationTimeoutMs ?? 10_000,
    requestTimeout: options.requestTimeoutMs ?? 30_000,
    enforceRequestTimeout: true,
    metadataMaxAge: 300_000,
    // Who retries is fixed in ports.ts ("Retries"); kafkajs's own retrier would stack under it.
    retry: { retries: 0 },
    // A metadata request must never create the topic it asks about on the source cluster.
    allowAutoTopicCreation: false,
    maxInFlightRequests: null,
    isolationLevel: 1,
  });
}

/** Forwards kafkajs's warnings and errors to our logger (exported for its tests). */
export function kafkajsLogger(logger: Logger | undefined): KafkajsLogger {
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

/** The current leader of `tp` by the cluster's metadata (loaded for the topic if needed). */
export async function partitionLeader(cluster: KafkajsCluster, tp: TopicPartition): Promise<number> {
  await cluster.addMultipleTargetTopics([tp.topic]);
  const partition = cluster.findTopicPartitionMetadata(tp.topic).find((p) => p.partitionId === tp.partition);
  if (partition === undefined) throw new KafkaPartitionError(KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  if (partition.leader === null || partition.leader < 0)
    throw new KafkaPartitionError(KafkaErrorCode.LEADER_NOT_AVAILABLE);
  return partition.leader;
}

/** Leader node id -> the listed partitions it leads; KAFKA_RETRIABLE when one is not in the metadata. */
export async function partitionLeaders(
  cluster: KafkajsCluster,
  topic: string,
  partitions: readonly number[],
): Promise<Map<number, number[]>> {
  await cluster.addMultipleTargetTopics([topic]);
  const unknownOf = () => {
    const known = new Set(cluster.findTopicPartitionMetadata(topic).map((p) => p.partitionId));
    return partitions.filter((p) => !known.has(p));
  };
  let unknown = unknownOf();
  if (unknown.length > 0) {
    // A topic that grew (CreatePartitions) is not re-read by kafkajs until its metadata ages out
    // (5 min): read it now, once, so new partitions are usable at once.
    await cluster.refreshMetadata();
    unknown = unknownOf();
  }
  if (unknown.length > 0) {
    throw new ReplicatorError("KAFKA_RETRIABLE", `topic ${topic} has no partition(s) ${unknown.join(", ")}`, {
      details: { topic, partitions: unknown },
    });
  }
  const byLeader = cluster.findLeaderForPartitions(topic, [...partitions]);
  return new Map(Object.entries(byLeader).map(([leader, ids]) => [Number(leader), ids]));
}

/** Node ids of the brokers in the loaded metadata, and the one to ask when any will do. */
export function knownBrokers(cluster: KafkajsCluster): { ids: number[]; preferred: number | undefined } {
  const metadata = cluster.brokerPool.metadata;
  const ids = metadata?.brokers.map((b) => b.nodeId) ?? [];
  return { ids, preferred: metadata?.controllerId ?? ids[0] };
}

/** The first of `implemented` that the broker's ApiVersions range allows. */
export function supportedVersion(
  broker: KafkajsBroker,
  apiKey: number,
  implemented: readonly number[],
): number | undefined {
  const range = broker.versions?.[apiKey];
  return implemented.find((v) => range !== undefined && v >= range.minVersion && v <= range.maxVersion);
}

export function negotiateVersion(
  broker: KafkajsBroker,
  apiName: string,
  apiKey: number,
  implemented: readonly number[],
): number {
  const version = supportedVersion(broker, apiKey, implemented);
  if (version === undefined) {
    throw new ReplicatorError(
      "KAFKA_FATAL",
      `broker ${broker.nodeId} does not support ${apiName} v${implemented.join("/v")}`,
      { details: { broker: broker.nodeId, apiName, supported: broker.versions?.[apiKey] ?? null } },
    );
  }
  return version;
}

/**
 * Sends one of our request definitions over a kafkajs broker connection. `implemented` lists the
 * versions we implement, newest first; the best one the broker supports is used.
 */
export async function sendRequest<T>(
  broker: KafkajsBroker,
  apiName: string,
  apiKey: number,
  implemented: readonly number[],
  build: (version: number) => KafkajsCall<T>,
  requestTimeout: number,
): Promise<T> {
  const version = negotiateVersion(broker, apiName, apiKey, implemented);
  const { request, response } = build(version);
  return broker.connectionPool.send({ request, response, requestTimeout });
}

export interface BodyApi {
  readonly apiName: string;
  readonly apiKey: number;
  readonly apiVersion: number;
}

/**
 * A request body laid out already: one buffer, or parts written one after the other, so a body
 * can share the bytes of a fetched batch instead of copying them (a produce of a source batch).
 */
export type RequestBody = Buffer | readonly Buffer[];

export function bodyLength(body: RequestBody): number {
  return Buffer.isBuffer(body) ? body.length : body.reduce((n, part) => n + part.length, 0);
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
  body: RequestBody,
  decode: (payload: Buffer) => T,
  requestTimeout: number,
): Promise<T> {
  return enqueueBody(await readyConnection(broker, api), api, body, decode, requestTimeout);
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
  body: RequestBody,
  decode: (payload: Buffer) => T,
  requestTimeout: number,
): Promise<T> {
  return new Promise<KafkajsQueuedResponse>((resolve, reject) => {
    connection.failIfNotConnected();
    const clientId = Buffer.from(connection.clientId, "utf8");
    const header = Buffer.allocUnsafe(4 + 2 + 2 + 4 + 2 + clientId.length);
    const correlationId = connection.nextCorrelationId();
    let at = header.writeInt32BE(header.length - 4 + bodyLength(body), 0);
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
        // A part in a fetch answer's buffer keeps it from reuse until node has handed it over.
        for (const part of Buffer.isBuffer(body) ? [body] : body) socket.write(part, answerPool.pin(part));
        socket.uncork();
      },
    });
  }).then(({ payload }) => decode(payload));
}

/** Metadata of every topic (an empty list asks for all; auto-creation is off). */
export function allTopicsMetadata(broker: KafkajsBroker): Promise<KafkajsMetadata> {
  return broker.metadata([]);
}

/** The transaction coordinator's node id for `transactionalId`, as `broker` knows it. */
export async function transactionCoordinatorId(
  broker: KafkajsBroker,
  transactionalId: string,
): Promise<number> {
  const { coordinator } = await broker.findGroupCoordinator({
    groupId: transactionalId,
    coordinatorType: COORDINATOR_TYPE.TRANSACTION,
  });
  return coordinator.nodeId;
}

/** The group coordinator's node id for `groupId`, as `broker` knows it. */
export async function groupCoordinatorId(broker: KafkajsBroker, groupId: string): Promise<number> {
  const { coordinator } = await broker.findGroupCoordinator({
    groupId,
    coordinatorType: COORDINATOR_TYPE.GROUP,
  });
  return coordinator.nodeId;
}

/** kafkajs's typed Broker requests we use as they are (see KafkajsBroker in kafkajs-types.ts). */
export const brokerRequests = {
  initProducerId: (broker: KafkajsBroker, request: Parameters<KafkajsBroker["initProducerId"]>[0]) =>
    broker.initProducerId(request),
  listOffsets: (broker: KafkajsBroker, request: Parameters<KafkajsBroker["listOffsets"]>[0]) =>
    broker.listOffsets(request),
  createTopics: (broker: KafkajsBroker, request: Parameters<KafkajsBroker["createTopics"]>[0]) =>
    broker.createTopics(request),
  addPartitionsToTxn: (broker: KafkajsBroker, request: Parameters<KafkajsBroker["addPartitionsToTxn"]>[0]) =>
    broker.addPartitionsToTxn(request),
  endTxn: (broker: KafkajsBroker, request: Parameters<KafkajsBroker["endTxn"]>[0]) => broker.endTxn(request),
};

/** The Cluster's own calls, for the cluster client. */
export const clusterCalls = {
  isConnected: (cluster: KafkajsCluster) => cluster.isConnected(),
  connect: (cluster: KafkajsCluster) => cluster.connect(),
  disconnect: (cluster: KafkajsCluster) => cluster.disconnect(),
  refreshMetadata: (cluster: KafkajsCluster) => cluster.refreshMetadata(),
  refreshMetadataIfNecessary: (cluster: KafkajsCluster) => cluster.refreshMetadataIfNecessary(),
  findBroker: (cluster: KafkajsCluster, nodeId: number) => cluster.findBroker({ nodeId }),
  findControllerBroker: (cluster: KafkajsCluster) => cluster.findControllerBroker(),
};
