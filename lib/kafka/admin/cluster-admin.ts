/**
 * ClusterAdmin over the cluster client: metadata, topic creation and partition growth on the
 * controller, topic configs (DescribeConfigs, IncrementalAlterConfigs) on any broker, offsets.
 * Each call is one attempt, re-routed once after a lost connection (ports.ts, "Retries").
 */
import type { PartitionOffsets, TopicInfo } from "../../core/model.js";
import type { ClusterAdmin } from "../../core/ports.js";
import { type ErrorCode, ReplicatorError } from "../../errors.js";
import { type ClusterClientOptions, KafkaClusterClient } from "../wire/cluster-client.js";
import { translateKafkajsError } from "../wire/connection.js";
import { CREATE_PARTITIONS_API, createPartitionsRequest } from "../wire/create-partitions.js";
import {
  ConfigResourceType,
  ConfigSource,
  DESCRIBE_CONFIGS_API,
  describeConfigsRequest,
  describeTopicConfigsRequest,
} from "../wire/describe-configs.js";
import { KafkaErrorCode, kafkaError } from "../wire/error-codes.js";
import {
  classicAlterRequest,
  decodeFlexibleAlter,
  encodeFlexibleAlter,
  INCREMENTAL_ALTER_CONFIGS_API,
  INCREMENTAL_ALTER_CONFIGS_FLEX_VERSION,
} from "../wire/incremental-alter-configs.js";
import { allTopicsMetadata, brokerRequests } from "../wire/kafkajs-internals.js";
import { listPartitionOffsets } from "../wire/list-offsets.js";

export interface KafkaClusterAdminOptions extends ClusterClientOptions {
  /** How long the controller may take to create a topic. @default 10000 */
  readonly createTimeoutMs?: number;
}

/** Kafka's code for an answer that says nothing more (here: no resource in the answer). */
const UNKNOWN_SERVER_ERROR = -1;

interface TopicCreateError {
  readonly topic: string;
  readonly code: number;
}

type TopicSpec = Parameters<ClusterAdmin["createTopics"]>[0][number];
type ConfigChange = Parameters<ClusterAdmin["alterTopicConfigs"]>[0][number];
type PartitionGrowth = Parameters<ClusterAdmin["createPartitions"]>[0][number];

/** A per-topic answer of an admin request. */
interface TopicAnswer {
  readonly topic: string;
  readonly code: number;
  readonly message: string | null;
  /** Overrides Kafka's retriable flag for the code. */
  readonly retryable?: boolean;
}

export class KafkaClusterAdmin implements ClusterAdmin {
  readonly #client: KafkaClusterClient;
  readonly #createTimeoutMs: number;

  constructor(options: KafkaClusterAdminOptions) {
    this.#client = new KafkaClusterClient(options);
    this.#createTimeoutMs = options.createTimeoutMs ?? 10_000;
  }

  listTopics(): Promise<TopicInfo[]> {
    return this.#once("list topics", {}, async () => {
      const metadata = await allTopicsMetadata(await this.#client.anyBroker());
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
    const failure = (await this.#createOnce(specs))[0];
    if (failure === undefined) return;
    const info = kafkaError(failure.code);
    throw new ReplicatorError("TOPIC_CREATE_FAILED", `creating topic ${failure.topic} failed: ${info.name}`, {
      retryable: info.retriable,
      details: { topic: failure.topic, kafkaErrorCode: failure.code, kafkaError: info.name },
    });
  }

  listOffsets(topic: string, partitions: readonly number[]): Promise<PartitionOffsets[]> {
    return this.#once(`list offsets of ${topic}`, { topic }, () =>
      listPartitionOffsets(this.#client, topic, partitions),
    );
  }

  /** One DescribeConfigs to any broker; only values set on the topic itself are kept. */
  async describeTopicConfigs(topics: readonly string[]): Promise<Map<string, ReadonlyMap<string, string>>> {
    const names = [...new Set(topics)];
    const answer = new Map<string, ReadonlyMap<string, string>>();
    if (names.length === 0) return answer;
    const resources = await this.#adminCall("TOPIC_CONFIG_FAILED", "describe configs of", names, async () =>
      this.#client.request(await this.#client.anyBroker(), DESCRIBE_CONFIGS_API, (v) =>
        describeTopicConfigsRequest(v, names),
      ),
    );
    throwFirstFailure(
      "TOPIC_CONFIG_FAILED",
      "describing configs of",
      resources
        .filter((r) => r.errorCode !== KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        .map((r) => ({ topic: r.name, code: r.errorCode, message: r.errorMessage })),
    );
    for (const r of resources) {
      if (r.errorCode !== KafkaErrorCode.NONE) continue;
      const set = new Map<string, string>();
      // A sensitive value comes back null: there is nothing to copy.
      for (const e of r.entries)
        if (e.source === ConfigSource.DYNAMIC_TOPIC_CONFIG && e.value !== null) set.set(e.name, e.value);
      answer.set(r.name, set);
    }
    return answer;
  }

  /**
   * One DescribeConfigs per broker, each for its own BROKER resource: Kafka answers a broker's
   * full config (server.properties and defaults included) only to that broker, and another broker
   * refuses the resource. Brokers are asked side by side; whoever does not answer is left out.
   */
  async describeBrokerConfigs(names: readonly string[]): Promise<Map<number, ReadonlyMap<string, string>>> {
    const ids = await this.#once("list brokers", {}, async () => (await this.#client.brokers()).ids);
    const answers = await Promise.allSettled(ids.map((id) => this.#brokerConfigs(id, names)));
    const configs = new Map<number, ReadonlyMap<string, string>>();
    answers.forEach((answer, k) => {
      const id = ids[k];
      if (answer.status === "fulfilled" && id !== undefined) configs.set(id, answer.value);
    });
    const failed = answers.find((a): a is PromiseRejectedResult => a.status === "rejected");
    if (configs.size === 0 && failed !== undefined) throw failed.reason;
    return configs;
  }

  /** One broker's own values of `names`; a refusal of the resource (no permission) throws. */
  async #brokerConfigs(id: number, names: readonly string[]): Promise<ReadonlyMap<string, string>> {
    const what = `describe configs of broker ${id}`;
    const [resource] = await this.#once(what, { brokerId: id }, async () =>
      this.#client.request(await this.#client.broker(id), DESCRIBE_CONFIGS_API, (v) =>
        describeConfigsRequest(v, [
          { type: ConfigResourceType.BROKER, name: String(id), configNames: names },
        ]),
      ),
    );
    if (resource === undefined || resource.errorCode !== KafkaErrorCode.NONE) {
      const code = resource?.errorCode ?? UNKNOWN_SERVER_ERROR;
      const info = kafkaError(code);
      throw new ReplicatorError(
        info.retriable ? "KAFKA_RETRIABLE" : "KAFKA_FATAL",
        `${what} failed: ${info.name}`,
        {
          details: { brokerId: id, kafkaErrorCode: code, kafkaError: info.name },
        },
      );
    }
    const values = new Map<string, string>();
    for (const e of resource.entries)
      if (names.includes(e.name) && e.value !== null) values.set(e.name, e.value);
    return values;
  }

  /**
   * One IncrementalAlterConfigs (SET operations) to any broker, which forwards it to the
   * controller. Never AlterConfigs: that replaces the whole set, dropping target-only settings.
   */
  async alterTopicConfigs(changes: readonly ConfigChange[]): Promise<void> {
    const merged = mergeChanges(changes);
    if (merged.length === 0) return;
    const topics = merged.map((c) => c.topic);
    const results = await this.#adminCall("TOPIC_CONFIG_FAILED", "alter configs of", topics, async () => {
      const broker = await this.#client.anyBroker();
      const api = INCREMENTAL_ALTER_CONFIGS_API;
      const version = this.#client.negotiate(broker, api.apiName, api.apiKey, api.versions);
      if (version < INCREMENTAL_ALTER_CONFIGS_FLEX_VERSION) {
        return this.#client.request(broker, api, () => classicAlterRequest(merged));
      }
      const body = encodeFlexibleAlter(merged);
      return this.#client.sendBody(broker, { ...api, apiVersion: version }, body, decodeFlexibleAlter);
    });
    throwFirstFailure(
      "TOPIC_CONFIG_FAILED",
      "altering configs of",
      results.map((r) => ({ topic: r.name, code: r.errorCode, message: r.errorMessage })),
    );
  }

  /**
   * One CreatePartitions to the controller. Kafka answers INVALID_PARTITIONS when the topic already
   * has `count` or more; fresh metadata then tells "already grown" (fine) from a refusal to retry
   * (notYetGrown). Resolves once the controller has the new partitions: like Kafka's AdminClient,
   * it does not wait for every broker's metadata to show them (ports.ts, ClusterAdmin).
   */
  async createPartitions(changes: readonly PartitionGrowth[]): Promise<void> {
    const growths = mergeGrowths(changes);
    if (growths.length === 0) return;
    const topics = growths.map((g) => g.topic);
    const results = await this.#adminCall(
      "PARTITIONS_CREATE_FAILED",
      "create partitions of",
      topics,
      async () =>
        this.#client.request(await this.#client.controller(), CREATE_PARTITIONS_API, (v) =>
          createPartitionsRequest(v, growths, this.#createTimeoutMs),
        ),
    );
    const answers = results.map((r) => ({ topic: r.topic, code: r.errorCode, message: r.errorMessage }));
    if (answers.some((a) => a.code === KafkaErrorCode.NOT_CONTROLLER)) await this.#client.refreshMetadata();
    const invalid = answers.some((a) => a.code === KafkaErrorCode.INVALID_PARTITIONS);
    const counts = invalid ? await this.#partitionCounts() : new Map<string, number>();
    const wanted = new Map(growths.map((g) => [g.topic, g.count]));
    throwFirstFailure(
      "PARTITIONS_CREATE_FAILED",
      "creating partitions of",
      answers.flatMap((a) =>
        a.code === KafkaErrorCode.INVALID_PARTITIONS
          ? notYetGrown(a, wanted.get(a.topic) ?? 0, counts.get(a.topic))
          : [a],
      ),
    );
  }

  async close(): Promise<void> {
    await this.#client.disconnect();
  }

  /** Partition count by topic, from fresh metadata. */
  async #partitionCounts(): Promise<Map<string, number>> {
    return new Map((await this.listTopics()).map((t) => [t.name, t.partitions]));
  }

  /** One attempt; a transport failure becomes `code` naming the topics, retryable as translated. */
  async #adminCall<T>(code: ErrorCode, what: string, topics: readonly string[], call: () => Promise<T>) {
    const label = `${what} ${topics.join(", ")}`;
    try {
      return await this.#client.attempt(label, call);
    } catch (error) {
      const translated = translateKafkajsError(error, label, { topics });
      // A refused login stays what it is: the functions re-read the secret on it.
      if (translated.code === "AUTHENTICATION_FAILED") throw translated;
      throw new ReplicatorError(code, translated.message, {
        cause: error,
        retryable: translated.retryable,
        details: { ...translated.details, topic: topics[0] },
      });
    }
  }

  /** Per-topic failures, "already exists" excluded, fatal ones first. Transport failures throw. */
  async #createOnce(specs: readonly TopicSpec[]): Promise<TopicCreateError[]> {
    try {
      await this.#client.attempt("create topics", async () =>
        brokerRequests.createTopics(await this.#client.controller(), {
          topics: specs.map((s) => ({
            topic: s.name,
            numPartitions: s.partitions,
            replicationFactor: s.replicationFactor,
            configEntries: [...(s.configs ?? [])].map(([name, value]) => ({ name, value })),
          })),
          timeout: this.#createTimeoutMs,
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

  async #once<T>(what: string, details: Record<string, unknown>, call: () => Promise<T>): Promise<T> {
    try {
      return await this.#client.attempt(what, call);
    } catch (error) {
      throw translateKafkajsError(error, what, details);
    }
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

/**
 * An INVALID_PARTITIONS answer to growing a topic to `count`, given the count a broker's metadata
 * shows (`seen`): nothing when that is `count` or more (already grown, not an error), else a
 * retryable failure. The controller answers INVALID_PARTITIONS only for a count at or below the
 * topic's current one, and each broker applies the controller's changes from the metadata log a
 * moment after it made them; a lower count in Metadata is a broker behind (the topic just created,
 * or grown by another worker), which the caller's next attempt reads again.
 */
function notYetGrown(answer: TopicAnswer, count: number, seen: number | undefined): TopicAnswer[] {
  if (seen !== undefined && seen >= count) return [];
  const shown = `Metadata read after it shows ${seen ?? "no"} partitions: a broker not yet updated`;
  const message = answer.message === null || answer.message === "" ? shown : `${answer.message}; ${shown}`;
  return [{ ...answer, message, retryable: true }];
}

const retryableAnswer = (a: TopicAnswer): boolean => a.retryable ?? kafkaError(a.code).retriable;

/** Throws `code` for the first failed topic, fatal ones first; the error names topic and Kafka error. */
function throwFirstFailure(code: ErrorCode, what: string, answers: readonly TopicAnswer[]): void {
  const failed = answers
    .filter((a) => a.code !== KafkaErrorCode.NONE)
    .sort((a, b) => Number(retryableAnswer(a)) - Number(retryableAnswer(b)));
  const first = failed[0];
  if (first === undefined) return;
  const info = kafkaError(first.code);
  const reason =
    first.message === null || first.message === "" ? info.name : `${info.name} (${first.message})`;
  throw new ReplicatorError(code, `${what} topic ${first.topic} failed: ${reason}`, {
    retryable: retryableAnswer(first),
    details: {
      topic: first.topic,
      kafkaErrorCode: first.code,
      kafkaError: info.name,
      ...(failed.length > 1 ? { alsoFailed: failed.slice(1).map((a) => a.topic) } : {}),
    },
  });
}

/** One entry per topic (Kafka refuses a request naming a resource twice); a later value wins. */
function mergeChanges(changes: readonly ConfigChange[]): ConfigChange[] {
  const byTopic = new Map<string, Map<string, string>>();
  for (const { topic, set } of changes) {
    if (set.size === 0) continue;
    const merged = byTopic.get(topic) ?? new Map<string, string>();
    for (const [name, value] of set) merged.set(name, value);
    byTopic.set(topic, merged);
  }
  return [...byTopic].map(([topic, set]) => ({ topic, set }));
}

/** One entry per topic, the largest count; a count that is not a whole number >= 1 is refused. */
function mergeGrowths(changes: readonly PartitionGrowth[]): PartitionGrowth[] {
  const byTopic = new Map<string, number>();
  for (const { topic, count } of changes) {
    if (!Number.isSafeInteger(count) || count < 1) {
      throw new ReplicatorError(
        "PARTITIONS_CREATE_FAILED",
        `partition count for topic ${topic} must be a whole number >= 1, not ${count}`,
        { retryable: false, details: { topic, count } },
      );
    }
    byTopic.set(topic, Math.max(count, byTopic.get(topic) ?? 0));
  }
  return [...byTopic].map(([topic, count]) => ({ topic, count }));
}
