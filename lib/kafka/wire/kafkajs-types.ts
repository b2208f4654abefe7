/**
 * The shapes of kafkajs 2.2.4's internals we use below its public API: the Cluster (connections,
 * broker discovery, metadata, leader lookup), the Broker's connection pool (request framing,
 * correlation, timeouts) and the Encoder/Decoder. kafkajs ships no types for these and is frozen
 * upstream, so they are pinned to 2.2.4. Types only: the calls live in kafkajs-internals.ts.
 */

/** FindCoordinator's key types (protocol/coordinatorTypes.js). */
export const COORDINATOR_TYPE = { GROUP: 0, TRANSACTION: 1 } as const;

export interface KafkajsLogEntry {
  namespace: string;
  level: number;
  label: string;
  log: { message: string; [field: string]: unknown };
}

export interface KafkajsLogger {
  info(message: string, extra?: object): void;
  error(message: string, extra?: object): void;
  warn(message: string, extra?: object): void;
  debug(message: string, extra?: object): void;
  namespace(name: string, logLevel?: number): KafkajsLogger;
}

export interface KafkajsEncoder {
  writeInt8(value: number): KafkajsEncoder;
  writeInt16(value: number): KafkajsEncoder;
  writeInt32(value: number): KafkajsEncoder;
  writeInt64(value: number | bigint | string): KafkajsEncoder;
  writeString(value: string | null): KafkajsEncoder;
  writeBytes(value: Buffer | null): KafkajsEncoder;
  writeArray(array: readonly (KafkajsEncoder | number | string)[]): KafkajsEncoder;
  writeEncoder(value: KafkajsEncoder): KafkajsEncoder;
  size(): number;
  readonly buffer: Buffer;
}

export interface KafkajsDecoder {
  readInt8(): number;
  readInt16(): number;
  readInt32(): number;
  /** kafkajs 2.2.4 returns a signed bigint. */
  readInt64(): bigint;
  readString(): string | null;
  readBytes(length?: number): Buffer | null;
  readArray<T>(reader: (decoder: KafkajsDecoder) => T): T[];
  canReadBytes(length: number): boolean;
}

/** A request definition as kafkajs's connection sends it. */
export interface KafkajsRequest {
  apiKey: number;
  apiVersion: number;
  apiName: string;
  encode(): Promise<KafkajsEncoder>;
  expectResponse?: () => boolean;
}

export interface KafkajsResponse<T> {
  decode(payload: Buffer): Promise<T>;
  parse(decoded: T): Promise<T>;
}

/** One request and the decoder of its answer: what every wire/ builder returns. */
export interface KafkajsCall<T> {
  request: KafkajsRequest;
  response: KafkajsResponse<T>;
}

export interface KafkajsApiVersionRange {
  minVersion: number;
  maxVersion: number;
}

/** What a queued request resolves with: the response body after the correlation id. */
export interface KafkajsQueuedResponse {
  size: number;
  payload: Buffer;
}

export interface KafkajsRequestQueue {
  push(request: {
    entry: {
      apiKey: number;
      apiName: string;
      apiVersion: number;
      correlationId: number;
      resolve(response: KafkajsQueuedResponse): void;
      reject(error: unknown): void;
    };
    expectResponse: boolean;
    requestTimeout: number;
    sendRequest(): void;
  }): void;
}

/** One broker connection (network/connection.js). */
export interface KafkajsConnection {
  readonly clientId: string;
  readonly socket: import("node:net").Socket;
  readonly requestQueue: KafkajsRequestQueue;
  /** False without SASL too: authenticate() is then a no-op, as in Connection.send. */
  isAuthenticated(): boolean;
  authenticate(): Promise<void>;
  /** Throws KafkaJSConnectionError when the socket is not connected. */
  failIfNotConnected(): void;
  nextCorrelationId(): number;
}

export interface KafkajsConnectionPool {
  /** The connection kafkajs would use for this API (Fetch has its own), connected. */
  getConnectionByRequest(protocolRequest: { request: { apiKey: number } }): Promise<KafkajsConnection>;
  send<T>(
    protocolRequest: KafkajsCall<T> & { requestTimeout?: number; logResponseError?: boolean },
  ): Promise<T>;
}

export interface KafkajsPartitionMetadata {
  partitionErrorCode: number;
  partitionId: number;
  leader: number | null;
  replicas: number[];
  isr: number[];
}

export interface KafkajsTopicMetadata {
  topicErrorCode: number;
  topic: string;
  isInternal?: boolean;
  partitionMetadata: KafkajsPartitionMetadata[];
}

export interface KafkajsMetadata {
  controllerId: number | null;
  brokers: { nodeId: number; host: string; port: number }[];
  topicMetadata: KafkajsTopicMetadata[];
}

export interface KafkajsBroker {
  nodeId: number | null;
  versions: Record<number, KafkajsApiVersionRange> | null;
  connectionPool: KafkajsConnectionPool;
  isConnected(): boolean;
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  metadata(topics?: string[]): Promise<KafkajsMetadata>;
  initProducerId(request: {
    transactionalId?: string | null;
    transactionTimeout?: number;
  }): Promise<{ producerId: string; producerEpoch: number }>;
  listOffsets(request: {
    replicaId?: number;
    isolationLevel?: number;
    topics: { topic: string; partitions: { partition: number; timestamp: number }[] }[];
  }): Promise<{
    responses: { topic: string; partitions: { partition: number; errorCode: number; offset: string }[] }[];
  }>;
  createTopics(request: {
    topics: {
      topic: string;
      numPartitions: number;
      replicationFactor: number;
      configEntries?: { name: string; value: string }[];
    }[];
    validateOnly?: boolean;
    timeout?: number;
  }): Promise<unknown>;
}

export interface KafkajsClusterOptions {
  logger: KafkajsLogger;
  socketFactory: unknown;
  brokers: string[];
  ssl?: unknown;
  sasl?: unknown;
  clientId: string;
  connectionTimeout: number;
  authenticationTimeout: number;
  requestTimeout: number;
  enforceRequestTimeout: boolean;
  metadataMaxAge: number;
  retry: { retries: number; initialRetryTime?: number; maxRetryTime?: number };
  allowAutoTopicCreation: boolean;
  maxInFlightRequests: number | null;
  isolationLevel: number;
}

export interface KafkajsCluster {
  brokerPool: { metadata: KafkajsMetadata | null };
  isConnected(): boolean;
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  refreshMetadata(): Promise<void>;
  refreshMetadataIfNecessary(): Promise<void>;
  addMultipleTargetTopics(topics: string[]): Promise<void>;
  metadata(options?: { topics?: string[] }): Promise<KafkajsMetadata>;
  findBroker(options: { nodeId: number }): Promise<KafkajsBroker>;
  findControllerBroker(): Promise<KafkajsBroker>;
  findTopicPartitionMetadata(topic: string): KafkajsPartitionMetadata[];
  findLeaderForPartitions(topic: string, partitions: number[]): Record<string, number[]>;
}

/**
 * The transaction coordinator's requests on kafkajs 2.2.4's Broker (broker/index.js), merged into
 * the Broker declared above: FindCoordinator v0..v2 (v0 has no key type: only groups),
 * AddPartitionsToTxn v0..v1, EndTxn v0..v1. Each rejects with a KafkaJSProtocolError carrying the
 * Kafka `code` when the answer holds an error (AddPartitionsToTxn: the first partition's error).
 * Producer ids travel as decimal strings, as initProducerId returns them.
 */
export interface KafkajsBroker {
  findGroupCoordinator(request: {
    groupId: string;
    coordinatorType: (typeof COORDINATOR_TYPE)[keyof typeof COORDINATOR_TYPE];
  }): Promise<{ coordinator: { nodeId: number; host: string; port: number } }>;
  addPartitionsToTxn(request: {
    transactionalId: string;
    producerId: string;
    producerEpoch: number;
    topics: { topic: string; partitions: number[] }[];
  }): Promise<{ errors: { topic: string; partitionErrors: { partition: number; errorCode: number }[] }[] }>;
  endTxn(request: {
    transactionalId: string;
    producerId: string;
    producerEpoch: number;
    /** true = commit, false = abort. */
    transactionResult: boolean;
  }): Promise<{ errorCode: number }>;
}
