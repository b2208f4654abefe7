/**
 * ClusterAdmin over the cluster client: metadata, topic creation on the controller, offsets.
 * Each call is one attempt, re-routed once after a lost connection (ports.ts, "Retries").
 */
import type { PartitionOffsets, TopicInfo } from "../core/model.js";
import type { ClusterAdmin } from "../core/ports.js";
import { ReplicatorError } from "../errors.js";
import { type ClusterClientOptions, KafkaClusterClient } from "./cluster-client.js";
import { translateKafkajsError } from "./connection.js";
import { KafkaErrorCode, kafkaError } from "./error-codes.js";
import { allTopicsMetadata, brokerRequests } from "./kafkajs-internals.js";
import { listPartitionOffsets } from "./list-offsets.js";

export interface KafkaClusterAdminOptions extends ClusterClientOptions {
  /** How long the controller may take to create a topic. @default 10000 */
  readonly createTimeoutMs?: number;
}

interface TopicCreateError {
  readonly topic: string;
  readonly code: number;
}

type TopicSpec = { name: string; partitions: number; replicationFactor: number };

export class KafkaClusterAdmin implements ClusterAdmin {
  private readonly client: KafkaClusterClient;
  private readonly createTimeoutMs: number;

  constructor(options: KafkaClusterAdminOptions) {
    this.client = new KafkaClusterClient(options);
    this.createTimeoutMs = options.createTimeoutMs ?? 10_000;
  }

  listTopics(): Promise<TopicInfo[]> {
    return this.once("list topics", {}, async () => {
      const metadata = await allTopicsMetadata(await this.anyBroker());
      return metadata.topicMetadata
        .filter((t) => t.topicErrorCode === KafkaErrorCode.NONE)
        .map((t) => ({ name: t.topic, partitions: t.partitionMetadata.length }))
        .sort((a, b) => a.name.localeCompare(b.name));
    });
  }

  /**
   * One CreateTopics request to the controller. A topic that already exists counts as created:
   * a retry by the caller after a lost answer then meets TOPIC_ALREADY_EXISTS.
   */
  async createTopics(specs: readonly TopicSpec[]): Promise<void> {
    if (specs.length === 0) return;
    const failure = (await this.createOnce(specs))[0];
    if (failure === undefined) return;
    const info = kafkaError(failure.code);
    throw new ReplicatorError("TOPIC_CREATE_FAILED", `creating topic ${failure.topic} failed: ${info.name}`, {
      retryable: info.retriable,
      details: { topic: failure.topic, kafkaErrorCode: failure.code, kafkaError: info.name },
    });
  }

  listOffsets(topic: string, partitions: readonly number[]): Promise<PartitionOffsets[]> {
    return this.once(`list offsets of ${topic}`, { topic }, () =>
      listPartitionOffsets(this.client, topic, partitions),
    );
  }

  async close(): Promise<void> {
    await this.client.disconnect();
  }

  /** Per-topic failures, "already exists" excluded, fatal ones first. Transport failures throw. */
  private async createOnce(specs: readonly TopicSpec[]): Promise<TopicCreateError[]> {
    try {
      await this.client.attempt("create topics", async () =>
        brokerRequests.createTopics(await this.client.controller(), {
          topics: specs.map((s) => ({
            topic: s.name,
            numPartitions: s.partitions,
            replicationFactor: s.replicationFactor,
          })),
          timeout: this.createTimeoutMs,
        }),
      );
      return [];
    } catch (error) {
      const perTopic = topicErrors(error);
      if (perTopic !== undefined) {
        return perTopic
          .filter((e) => e.code !== KafkaErrorCode.TOPIC_ALREADY_EXISTS)
          .sort((a, b) => Number(kafkaError(a.code).retriable) - Number(kafkaError(b.code).retriable));
      }
      const topics = specs.map((s) => s.name);
      const translated = translateKafkajsError(error, `create topics ${topics.join(", ")}`, { topics });
      throw new ReplicatorError("TOPIC_CREATE_FAILED", translated.message, {
        cause: error,
        retryable: translated.retryable,
        details: { ...translated.details, topic: topics[0] },
      });
    }
  }

  private async once<T>(what: string, details: Record<string, unknown>, call: () => Promise<T>): Promise<T> {
    try {
      return await this.client.attempt(what, call);
    } catch (error) {
      throw translateKafkajsError(error, what, details);
    }
  }

  private async anyBroker() {
    const { preferred } = await this.client.brokers();
    if (preferred === undefined || preferred === null) {
      throw new ReplicatorError("KAFKA_RETRIABLE", "cluster metadata lists no broker");
    }
    return this.client.broker(preferred);
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
