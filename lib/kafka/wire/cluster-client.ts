/**
 * The one cluster client, as platformatic/kafka's Base client: it owns a kafkajs Cluster (one
 * connect at a time), metadata refresh, leader lookup (with each leader's epoch, for requests
 * that carry one: leader-epochs.ts), version negotiation and the re-route of one attempt after a
 * leader change, a leader epoch refusal or a lost connection. The reader, the writer (its producer
 * session and transaction coordinators) and the admin each hold an instance of their own and
 * never touch kafkajs: their connections are their own, so a long-polling Fetch never queues a
 * Produce or an admin call behind it, and closing one adapter closes only its connections.
 *
 * It makes no retries of its own (ports.ts, "Retries"): `attempt` calls once and, when the answer
 * says the request went to the wrong broker or the connection broke, refreshes metadata and calls
 * once more; whatever fails then is the caller's to decide.
 */
import { systemClock } from "../../core/clock.js";
import type { TopicPartition } from "../../core/model.js";
import type { Clock, Logger } from "../../core/ports.js";
import { describeError, ReplicatorError } from "../../errors.js";
import { isTransientKafkajsError, type KafkaConnectionOptions, protocolErrorCode } from "./connection.js";
import { KafkaErrorCode, KafkaPartitionError } from "./error-codes.js";
import {
  type BodyApi,
  clusterCalls,
  createKafkaCluster,
  enqueueBody,
  type KafkajsBroker,
  type KafkajsCall,
  type KafkajsCluster,
  type KafkajsConnection,
  knownBrokers,
  negotiateVersion,
  partitionLeader,
  partitionLeaders,
  type RequestBody,
  readyConnection,
  sendBody,
  sendRequest,
  supportedVersion,
} from "./kafkajs-internals.js";
import { LeaderEpochs, type PartitionRoute } from "./leader-epochs.js";
import {
  decodeMetadataResponse,
  encodeMetadataRequest,
  METADATA_API_KEY,
  METADATA_ID_VERSIONS,
  type TopicIdentity,
} from "./metadata.js";

export interface ClusterClientOptions extends KafkaConnectionOptions {
  /** Deadlines and pauses are read on this clock. @default systemClock */
  readonly clock?: Clock;
}

/** A broker handle from the client; pass it back to the client's request methods. */
export type Broker = KafkajsBroker;
export type BrokerConnection = KafkajsConnection;
export type { BodyApi, PartitionRoute, RequestBody };

/**
 * Answers meaning "this broker is not the partition's leader (any more)": look it up again. The
 * two epoch answers (KIP-320) say our leader epoch and the broker's differ: FENCED_LEADER_EPOCH,
 * ours is older (the leader moved, maybe back); UNKNOWN_LEADER_EPOCH, the broker's is older (it
 * has not heard of the change yet, or it is a deposed leader that does not know). Either way the
 * metadata we routed by is stale, and fresh metadata brings the right leader and its epoch.
 */
const REROUTE_CODES: ReadonlySet<number> = new Set([
  KafkaErrorCode.NOT_LEADER_OR_FOLLOWER,
  KafkaErrorCode.LEADER_NOT_AVAILABLE,
  KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  KafkaErrorCode.FENCED_LEADER_EPOCH,
  KafkaErrorCode.UNKNOWN_LEADER_EPOCH,
]);

/**
 * After a leader change or a lost connection the same request to fresh metadata's broker may
 * succeed. A request timeout already spent the attempt's bound, so it is not re-routed.
 */
export function needsReroute(error: unknown): boolean {
  const code = protocolErrorCode(error);
  if (code !== undefined) return REROUTE_CODES.has(code);
  return (
    error instanceof Error && error.name !== "KafkaJSRequestTimeoutError" && isTransientKafkajsError(error)
  );
}

export class KafkaClusterClient {
  readonly requestTimeoutMs: number;
  readonly clock: Clock;
  readonly #cluster: KafkajsCluster;
  readonly #logger: Logger | undefined;
  readonly #epochs = new LeaderEpochs(
    async (topic, via) => (await this.#readTopic(topic, via))?.partitions ?? null,
  );
  #pending: Promise<void> | undefined;

  constructor(options: ClusterClientOptions) {
    this.#cluster = createKafkaCluster(options);
    this.#logger = options.logger;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.clock = options.clock ?? systemClock;
  }

  /**
   * One connect at a time, shared by every concurrent caller. kafkajs reports a cluster
   * connected as soon as the seed broker's socket is open, before its ApiVersions round trip has
   * set up request lookup; a caller that trusted `isConnected()` then failed with "Broker not
   * connected". So an in-flight connect is always awaited, whatever `isConnected()` says.
   */
  connect(): Promise<void> {
    if (this.#pending !== undefined) return this.#pending;
    if (clusterCalls.isConnected(this.#cluster)) return Promise.resolve();
    const pending = clusterCalls.connect(this.#cluster).finally(() => {
      if (this.#pending === pending) this.#pending = undefined;
    });
    this.#pending = pending;
    return pending;
  }

  /**
   * Reloads metadata after a leader moved or a broker went away, and drops the leader epochs
   * kept, which are read again with the leaders. Failures are only logged: the request sent next
   * fails on its own if the cluster is still unreachable, with a better error.
   */
  async refreshMetadata(): Promise<void> {
    this.#epochs.forget();
    try {
      await this.connect();
      await clusterCalls.refreshMetadata(this.#cluster);
    } catch (error) {
      this.#logger?.debug("metadata refresh failed", { ...describeError(error) });
    }
  }

  /**
   * `call` once; after an answer or failure that says the request went to the wrong broker or
   * lost its connection, fresh metadata and `call` once more. Nothing else is repeated.
   */
  async attempt<T>(what: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (!needsReroute(error)) throw error;
      this.#logger?.debug(`${what}: re-routing after fresh metadata`, { ...describeError(error) });
      await this.refreshMetadata();
      return call();
    }
  }

  /** The partition's current leader by the loaded metadata. */
  async leaderFor(tp: TopicPartition): Promise<number> {
    await this.connect();
    return partitionLeader(this.#cluster, tp);
  }

  /**
   * The partition's leader by the loaded metadata, and the leader epoch a request to it carries
   * (KIP-320; -1 when the broker does not tell), so that a broker at another epoch refuses
   * instead of answering from a log that may not be the leader's.
   */
  async route(tp: TopicPartition): Promise<PartitionRoute> {
    const leader = await this.leaderFor(tp);
    return { leader, leaderEpoch: await this.#epochs.epochFor(tp, leader) };
  }

  /**
   * The topic id and each partition's leader and epoch, by Metadata v10+ asked of `tp`'s leader
   * (fresh, and kept for `route`); null when that broker has no Metadata v10.
   */
  async describeTopic(tp: TopicPartition): Promise<TopicIdentity | null> {
    const identity = await this.#readTopic(tp.topic, await this.leaderFor(tp));
    this.#epochs.learn(tp.topic, identity?.partitions ?? null);
    return identity;
  }

  /** Leader node id -> the listed partitions of `topic` it leads. */
  async leadersOf(topic: string, partitions: readonly number[]): Promise<Map<number, number[]>> {
    await this.connect();
    return partitionLeaders(this.#cluster, topic, partitions);
  }

  async broker(nodeId: number): Promise<Broker> {
    // kafkajs knows brokers only from metadata: a client that has only connected (one used for
    // fetches alone, source-reader.ts) would have its first call fail with "not found".
    await this.#metadataLoaded();
    return clusterCalls.findBroker(this.#cluster, nodeId);
  }

  async controller(): Promise<Broker> {
    await this.#metadataLoaded();
    return clusterCalls.findControllerBroker(this.#cluster);
  }

  /** The brokers the metadata lists (node ids), and one to ask when any broker will do. */
  async brokers(): Promise<{ ids: number[]; preferred: number | undefined }> {
    await this.#metadataLoaded();
    return knownBrokers(this.#cluster);
  }

  /** The broker to ask when any will do (the metadata's preferred one). */
  async anyBroker(): Promise<Broker> {
    const { preferred } = await this.brokers();
    if (preferred === undefined || preferred === null) {
      throw new ReplicatorError("KAFKA_RETRIABLE", "cluster metadata lists no broker");
    }
    return this.broker(preferred);
  }

  /** The first of `implemented` the broker supports; undefined when none. */
  supported(broker: Broker, apiKey: number, implemented: readonly number[]): number | undefined {
    return supportedVersion(broker, apiKey, implemented);
  }

  /** As `supported`, but a broker that supports none is KAFKA_FATAL. */
  negotiate(broker: Broker, apiName: string, apiKey: number, implemented: readonly number[]): number {
    return negotiateVersion(broker, apiName, apiKey, implemented);
  }

  /** One of our request definitions, at the best version both sides speak. */
  request<T>(
    broker: Broker,
    api: { readonly apiName: string; readonly apiKey: number; readonly versions: readonly number[] },
    build: (version: number) => KafkajsCall<T>,
    timeoutMs: number = this.requestTimeoutMs,
  ): Promise<T> {
    return sendRequest(broker, api.apiName, api.apiKey, api.versions, build, timeoutMs);
  }

  /** A request whose body is laid out already (kafkajs-internals.ts, sendBody). */
  sendBody<T>(broker: Broker, api: BodyApi, body: RequestBody, decode: (payload: Buffer) => T): Promise<T> {
    return sendBody(broker, api, body, decode, this.requestTimeoutMs);
  }

  /** The connection `api` goes over, connected and authenticated: for pipelined bodies. */
  connection(broker: Broker, api: BodyApi): Promise<BrokerConnection> {
    return readyConnection(broker, api);
  }

  /** Queues a body on `connection` without awaiting first (kafkajs-internals.ts, enqueueBody). */
  enqueue<T>(connection: BrokerConnection, api: BodyApi, body: RequestBody, decode: (payload: Buffer) => T) {
    return enqueueBody(connection, api, body, decode, this.requestTimeoutMs);
  }

  async disconnect(): Promise<void> {
    await clusterCalls.disconnect(this.#cluster);
  }

  /**
   * Metadata v10+ for `topic`, asked of node `via` (the partition's leader: the broker the
   * request goes to anyway, so a down broker elsewhere never stalls the read).
   */
  async #readTopic(topic: string, via: number): Promise<TopicIdentity | null> {
    const broker = await this.broker(via);
    const version = this.supported(broker, METADATA_API_KEY, METADATA_ID_VERSIONS);
    if (version === undefined) return null;
    const api = { apiName: "Metadata", apiKey: METADATA_API_KEY, apiVersion: version };
    const answer = await this.sendBody(broker, api, encodeMetadataRequest(version, topic), (payload) =>
      decodeMetadataResponse(version, payload),
    );
    if (answer === null) throw new KafkaPartitionError(KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    if (answer.errorCode !== KafkaErrorCode.NONE) throw new KafkaPartitionError(answer.errorCode);
    return answer;
  }

  async #metadataLoaded(): Promise<void> {
    await this.connect();
    await clusterCalls.refreshMetadataIfNecessary(this.#cluster);
  }
}
