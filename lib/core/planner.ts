/**
 * Decides which source partitions are mirrored and where each one lands, creating missing target
 * topics on the way. Partition p of a source topic always goes to partition p of its target
 * topic, so per-key ordering survives the copy.
 */
import { isReplicatorError, ReplicatorError } from "../errors.js";
import type { TopicInfo, TopicPartition } from "./model.js";
import type { ClusterAdmin, TopicMapping } from "./ports.js";
import { type KafkaRetry, retryRetryable } from "./retry.js";

export interface PlanTopicsOptions {
  readonly sourceAdmin: ClusterAdmin;
  readonly targetAdmin: ClusterAdmin;
  readonly mapping: TopicMapping;
  /** Replication factor of target topics this planner creates. */
  readonly replicationFactor: number;
  /**
   * How a creation that failed transiently is retried: within the planning's deadline, so a
   * broker that blinked does not leave the topic out of the whole run. The listings are not
   * retried here; the caller retries the whole planning (it is idempotent).
   */
  readonly retry: KafkaRetry;
}

export interface PartitionRoute {
  readonly source: TopicPartition;
  readonly target: TopicPartition;
}

export interface TopicPlanError {
  /** The source topic that will not be mirrored in this run. */
  readonly topic: string;
  readonly error: ReplicatorError;
}

export interface TopicPlan {
  /** Sorted by source topic, then partition. */
  readonly partitions: PartitionRoute[];
  /** One entry per source topic left out; the other topics proceed. */
  readonly errors: TopicPlanError[];
}

interface MappedTopic {
  readonly source: string;
  readonly target: string;
  readonly partitions: number;
}

/**
 * Lists, maps and checks topics. Target topics are created with the SOURCE's partition count:
 * MirrorMaker 1 left that to the broker default, which silently re-partitions keyed data.
 *
 * Several workers planning at once is the normal case: createTopics treats "already exists" as
 * success, and the counts are checked on a fresh listing taken after creating, so a topic
 * another worker (or a person) created with too few partitions is still caught.
 */
export async function planTopics(options: PlanTopicsOptions): Promise<TopicPlan> {
  const { sourceAdmin, targetAdmin, mapping } = options;
  const errors: TopicPlanError[] = [];
  const mapped = mapTopics(await sourceAdmin.listTopics(), mapping, errors);
  const routable = withoutCollisions(mapped, errors);

  const existing = await targetTopicCounts(targetAdmin);
  const missing = routable.filter((t) => !existing.has(t.target));
  const createFailed = await createMissing(targetAdmin, missing, options, errors);

  const after = missing.length > 0 ? await targetTopicCounts(targetAdmin) : existing;
  const partitions = routable
    .filter((t) => !createFailed.has(t.source))
    .flatMap((t) => routesOf(t, after.get(t.target), errors));
  errors.sort((a, b) => compare(a.topic, b.topic));
  return { partitions, errors };
}

/** The selected source topics, by name, with their target names; a topic that fails to map is an error. */
function mapTopics(
  topics: readonly TopicInfo[],
  mapping: TopicMapping,
  errors: TopicPlanError[],
): MappedTopic[] {
  const mapped: MappedTopic[] = [];
  for (const topic of [...topics].sort((a, b) => compare(a.name, b.name))) {
    try {
      if (!mapping.isSelected(topic.name)) continue;
      mapped.push({
        source: topic.name,
        target: mapping.targetTopic(topic.name),
        partitions: topic.partitions,
      });
    } catch (error) {
      errors.push({ topic: topic.name, error: asMappingError(topic.name, error) });
    }
  }
  return mapped;
}

/** Creates the missing target topics; returns the source topics whose target could not be created. */
async function createMissing(
  admin: ClusterAdmin,
  missing: readonly MappedTopic[],
  { replicationFactor, retry }: PlanTopicsOptions,
  errors: TopicPlanError[],
): Promise<Set<string>> {
  const createFailed = new Set<string>();
  // One request per topic so a failure is charged to the topic that caused it. "Already exists"
  // is success, so a retry after a lost answer is harmless.
  await Promise.all(
    missing.map(async (t) => {
      try {
        const spec = { name: t.target, partitions: t.partitions, replicationFactor };
        await retryRetryable(`creating topic ${t.target}`, () => admin.createTopics([spec]), retry);
      } catch (error) {
        createFailed.add(t.source);
        errors.push({ topic: t.source, error: asCreateError(t, error) });
      }
    }),
  );
  return createFailed;
}

/** Partition p to partition p, if the target topic (with `targetPartitions`) can take them all. */
function routesOf(
  t: MappedTopic,
  targetPartitions: number | undefined,
  errors: TopicPlanError[],
): PartitionRoute[] {
  if (targetPartitions === undefined) {
    errors.push({
      topic: t.source,
      error: new ReplicatorError(
        "TOPIC_CREATE_FAILED",
        `target topic ${t.target} is not listed after creation`,
        {
          details: { sourceTopic: t.source, targetTopic: t.target },
        },
      ),
    });
    return [];
  }
  if (targetPartitions < t.partitions) {
    errors.push({
      topic: t.source,
      error: new ReplicatorError(
        "TARGET_PARTITIONS_TOO_FEW",
        `target topic ${t.target} has ${targetPartitions} partitions, source topic ${t.source} has ${t.partitions}`,
        {
          details: {
            sourceTopic: t.source,
            targetTopic: t.target,
            sourcePartitions: t.partitions,
            targetPartitions,
          },
        },
      ),
    });
    return [];
  }
  return Array.from({ length: t.partitions }, (_, p) => ({
    source: { topic: t.source, partition: p },
    target: { topic: t.target, partition: p },
  }));
}

async function targetTopicCounts(admin: ClusterAdmin): Promise<Map<string, number>> {
  return new Map((await admin.listTopics()).map((t) => [t.name, t.partitions]));
}

/** Two source topics writing into one target topic would interleave unrelated partitions. */
function withoutCollisions(mapped: readonly MappedTopic[], errors: TopicPlanError[]): MappedTopic[] {
  const byTarget = new Map<string, string[]>();
  for (const t of mapped) byTarget.set(t.target, [...(byTarget.get(t.target) ?? []), t.source]);
  return mapped.filter((t) => {
    const sources = byTarget.get(t.target) ?? [];
    if (sources.length <= 1) return true;
    errors.push({
      topic: t.source,
      error: new ReplicatorError(
        "CONFIG_INVALID",
        `source topics ${sources.join(", ")} all map to target topic ${t.target}`,
        { details: { sourceTopic: t.source, targetTopic: t.target, collidingSources: sources } },
      ),
    });
    return false;
  });
}

function asMappingError(topic: string, error: unknown): ReplicatorError {
  if (isReplicatorError(error)) return error;
  return new ReplicatorError("CONFIG_INVALID", `topic mapping failed for ${topic}`, {
    cause: error,
    details: { sourceTopic: topic },
  });
}

function asCreateError(t: MappedTopic, error: unknown): ReplicatorError {
  if (isReplicatorError(error)) return error;
  return new ReplicatorError("TOPIC_CREATE_FAILED", `creating target topic ${t.target} failed`, {
    cause: error,
    details: { sourceTopic: t.source, targetTopic: t.target },
  });
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
