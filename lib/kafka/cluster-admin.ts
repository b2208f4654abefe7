/** ClusterAdmin over kafkajs's Cluster: metadata, topic creation on the controller, offsets. */
import type { PartitionOffsets, TopicInfo } from "../core/model.js";
import type { ClusterAdmin, Logger } from "../core/ports.js";
import { isReplicatorError, ReplicatorError } from "../errors.js";
import { backoffDelay, sleep } from "./backoff.js";
import {
  ClusterConnector,
  createKafkaCluster,
  isTransientKafkajsError,
  type KafkaConnectionOptions,
  translateKafkajsError,
} from "./connection.js";
import { KafkaErrorCode, kafkaError } from "./error-codes.js";
import type { KafkajsCluster } from "./kafkajs-internals.js";
import { listPartitionOffsets } from "./list-offsets.js";

export interface KafkaClusterAdminOptions extends KafkaConnectionOptions {
  /** Attempts per call before a transient failure is thrown. @default 5 */
  readonly maxAttempts?: number;
  /** First retry delay; doubles per attempt. @default 100 */
  readonly retryBackoffMs?: number;
  /** How long the controller may take to create a topic. @default 10000 */
  readonly createTimeoutMs?: number;
}

interface TopicCreateError {
  readonly topic: string;
  readonly code: number;
}

export class KafkaClusterAdmin implements ClusterAdmin {
  private readonly cluster: KafkajsCluster;
  private readonly maxAttempts: number;
  private readonly retryBackoffMs: number;
  private readonly createTimeoutMs: number;
  private readonly logger: Logger | undefined;
  private readonly connector: ClusterConnector;

  constructor(options: KafkaClusterAdminOptions) {
    this.cluster = createKafkaCluster(options);
    this.connector = new ClusterConnector(this.cluster, options.logger);
    this.maxAttempts = options.maxAttempts ?? 5;
    this.retryBackoffMs = options.retryBackoffMs ?? 100;
    this.createTimeoutMs = options.createTimeoutMs ?? 10_000;
    this.logger = options.logger;
  }

  listTopics(): Promise<TopicInfo[]> {
    return this.retrying("list topics", {}, async () => {
      const broker = await this.anyBroker();
      // An empty list asks for every topic; allowAutoTopicCreation is off in the cluster factory.
      const metadata = await broker.metadata([]);
      return metadata.topicMetadata
        .filter((t) => t.topicErrorCode === KafkaErrorCode.NONE)
        .map((t) => ({ name: t.topic, partitions: t.partitionMetadata.length }))
        .sort((a, b) => a.name.localeCompare(b.name));
    });
  }

  async createTopics(
    specs: readonly { name: string; partitions: number; replicationFactor: number }[],
  ): Promise<void> {
    if (specs.length === 0) return;
    let pending = [...specs];
    for (let attempt = 1; ; attempt++) {
      let failures: TopicCreateError[];
      try {
        failures = await this.createOnce(pending);
      } catch (error) {
        // A broken connection may or may not have delivered the request: the next attempt then
        // meets TOPIC_ALREADY_EXISTS, which counts as success.
        if (!isReplicatorError(error) || !error.retryable || attempt >= this.maxAttempts) throw error;
        this.logger?.debug("create topics: retrying", { attempt, error: error.message });
        await this.refreshMetadata();
        await sleep(backoffDelay(attempt - 1, { initialMs: this.retryBackoffMs }));
        continue;
      }
      const fatal = failures.find((f) => !kafkaError(f.code).retriable);
      const retry = failures.filter((f) => kafkaError(f.code).retriable);
      if (fatal !== undefined || (retry.length > 0 && attempt >= this.maxAttempts)) {
        const failure = fatal ?? (retry[0] as TopicCreateError);
        const info = kafkaError(failure.code);
        throw new ReplicatorError(
          "TOPIC_CREATE_FAILED",
          `creating topic ${failure.topic} failed: ${info.name}`,
          {
            retryable: info.retriable,
            details: { topic: failure.topic, kafkaErrorCode: failure.code, kafkaError: info.name },
          },
        );
      }
      if (retry.length === 0) return;
      pending = pending.filter((s) => retry.some((r) => r.topic === s.name));
      await this.refreshMetadata();
      await sleep(backoffDelay(attempt - 1, { initialMs: this.retryBackoffMs }));
    }
  }

  listOffsets(topic: string, partitions: readonly number[]): Promise<PartitionOffsets[]> {
    return this.retrying(`list offsets of ${topic}`, { topic }, async () => {
      await this.connect();
      return listPartitionOffsets(this.cluster, topic, partitions);
    });
  }

  async close(): Promise<void> {
    await this.cluster.disconnect();
  }

  /** Per-topic failures, "already exists" excluded. Transport failures throw. */
  private async createOnce(
    specs: readonly { name: string; partitions: number; replicationFactor: number }[],
  ): Promise<TopicCreateError[]> {
    try {
      await this.connect();
      await this.cluster.refreshMetadataIfNecessary();
      const controller = await this.cluster.findControllerBroker();
      await controller.createTopics({
        topics: specs.map((s) => ({
          topic: s.name,
          numPartitions: s.partitions,
          replicationFactor: s.replicationFactor,
        })),
        timeout: this.createTimeoutMs,
      });
      return [];
    } catch (error) {
      const perTopic = topicErrors(error);
      if (perTopic !== undefined)
        return perTopic.filter((e) => e.code !== KafkaErrorCode.TOPIC_ALREADY_EXISTS);
      const topics = specs.map((s) => s.name);
      const translated = translateKafkajsError(error, `create topics ${topics.join(", ")}`, { topics });
      throw new ReplicatorError("TOPIC_CREATE_FAILED", translated.message, {
        cause: error,
        retryable: translated.retryable,
        details: { ...translated.details, topic: topics[0] },
      });
    }
  }

  private async retrying<T>(
    what: string,
    details: Record<string, unknown>,
    call: () => Promise<T>,
  ): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await call();
      } catch (error) {
        const transient = isReplicatorError(error)
          ? error.code === "KAFKA_RETRIABLE"
          : isTransientKafkajsError(error);
        if (!transient || attempt >= this.maxAttempts) throw translateKafkajsError(error, what, details);
        this.logger?.debug(`${what}: retrying`, { attempt });
        await this.refreshMetadata();
        await sleep(backoffDelay(attempt - 1, { initialMs: this.retryBackoffMs }));
      }
    }
  }

  private async anyBroker() {
    await this.connect();
    await this.cluster.refreshMetadataIfNecessary();
    const metadata = this.cluster.brokerPool.metadata;
    const nodeId = metadata?.controllerId ?? metadata?.brokers[0]?.nodeId;
    if (nodeId === undefined || nodeId === null) {
      throw new ReplicatorError("KAFKA_RETRIABLE", "cluster metadata lists no broker");
    }
    return this.cluster.findBroker({ nodeId });
  }

  private connect(): Promise<void> {
    return this.connector.connect();
  }

  private refreshMetadata(): Promise<void> {
    return this.connector.refreshMetadata();
  }
}

/**
 * kafkajs's CreateTopics response parser throws a KafkaJSAggregateError of KafkaJSCreateTopicError
 * (`.topic`, `.code`) when any topic failed; this recovers the per-topic codes.
 */
function topicErrors(error: unknown): TopicCreateError[] | undefined {
  if (!(error instanceof Error) || error.name !== "KafkaJSAggregateError" || !("errors" in error))
    return undefined;
  const errors = error.errors;
  if (!Array.isArray(errors)) return undefined;
  const result: TopicCreateError[] = [];
  for (const e of errors) {
    if (typeof e !== "object" || e === null || typeof e.topic !== "string" || typeof e.code !== "number")
      return undefined;
    result.push({ topic: e.topic, code: e.code });
  }
  return result;
}
