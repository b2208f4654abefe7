/**
 * Decides which source partitions are mirrored and where each one lands, and brings the target
 * topics in line first: missing ones are created with the source's partition count and synced
 * configs, ones with too few partitions are grown, and synced configs that differ are SET.
 * Partition p of a source topic always goes to partition p of its target topic, so per-key
 * ordering survives the copy.
 *
 * The drift itself is computed in one place (topic-drift.ts, read here by `readDrift`): the
 * worker applies it on every discovery, `kafka-mirror plan` only prints it.
 *
 * Cost of one planning: one Metadata request per cluster, and (config sync on) one
 * DescribeConfigs per cluster for all selected topics at once; writes only where there is drift.
 */
import { isReplicatorError, ReplicatorError } from "../../errors.js";
import type { ClusterAdmin, TopicMapping } from "../ports.js";
import type {
  DriftOptions,
  DriftReport,
  PartitionRoute,
  PlanTopicsOptions,
  TopicPlan,
  TopicPlanError,
} from "./model.js";
import { applyDrift } from "./plan-apply.js";
import {
  type MappedTopic,
  recompressionWarning,
  type TopicDrift,
  tooFewPartitions,
  topicDrift,
} from "./topic-drift.js";

/**
 * Lists, maps, and describes both sides; changes nothing. Reading configs can fail where
 * listing does not (an ACL or IAM policy without DescribeConfigs): a non-retryable failure is a
 * warning and drift is computed without configs, a retryable one is thrown for the caller's retry.
 */
export async function readDrift(options: DriftOptions): Promise<DriftReport> {
  const { sourceAdmin, targetAdmin, mapping, configSync } = options;
  const errors: TopicPlanError[] = [];
  const warnings: TopicPlanError[] = [];
  const [sourceTopics, targetTopics] = await Promise.all([
    sourceAdmin.listTopics(),
    targetAdmin.listTopics(),
  ]);
  const mapped = mapTopics(sourceTopics, mapping, errors);
  const emptySelection =
    mapped.length === 0 && errors.length === 0
      ? mapping.whyNothingSelected(sourceTopics.map((t) => t.name))
      : null;
  const routable = withoutCollisions(mapped, errors);
  const targetCounts = new Map(targetTopics.map((t) => [t.name, t.partitions]));
  const existing = routable.filter((t) => targetCounts.has(t.target)).map((t) => t.target);
  const before = warnings.length;
  const [sourceConfigs, targetConfigs] = configSync.enabled
    ? await Promise.all([
        configsOf(
          sourceAdmin,
          "source",
          routable.map((t) => t.source),
          warnings,
        ),
        configsOf(targetAdmin, "target", existing, warnings),
      ])
    : [new Map(), new Map()];
  const topics = routable.map((topic) =>
    topicDrift({
      topic,
      targetPartitions: targetCounts.get(topic.target),
      sourceConfigs: sourceConfigs.get(topic.source) ?? new Map(),
      targetConfigs: targetConfigs.get(topic.target) ?? new Map(),
      policy: configSync,
    }),
  );
  const sourceConfigsRead = !warnings.slice(before).some((w) => w.error.details.side === "source");
  return { topics, errors: errors.sort(byTopic), warnings, sourceConfigsRead, emptySelection };
}

/**
 * Reads the drift, applies it (create, grow, set configs) and routes p to p for every topic whose
 * target can take all its partitions. Several workers planning at once is the normal case:
 * "already exists" and "already has that many partitions" are success, and a SET of a value
 * another worker just set is harmless.
 */
export async function planTopics(options: PlanTopicsOptions): Promise<TopicPlan> {
  const read = await readDrift(options);
  const applied = await applyDrift(options, read);
  const errors = [...read.errors, ...applied.errors];
  const partitions = read.topics
    .filter((d) => !applied.failed.has(d.source))
    .flatMap((d) => routesOf(d, applied.targetPartitions.get(d.source) ?? d.targetPartitions, errors));
  return {
    partitions,
    errors: errors.sort(byTopic),
    warnings: [...read.warnings, ...applied.warnings, ...recompressionWarnings(read.topics, options)].sort(
      byTopic,
    ),
    drift: read.topics,
    emptySelection: read.emptySelection,
  };
}

function recompressionWarnings(drift: readonly TopicDrift[], options: PlanTopicsOptions): TopicPlanError[] {
  const codec = options.configSync.compressionType;
  if (codec === undefined) return [];
  return drift.flatMap((d) => {
    const error = recompressionWarning(d, codec);
    return error === null ? [] : [{ topic: d.source, error }];
  });
}

/** The selected source topics, by name, with their target names; a topic that fails to map is an error. */
function mapTopics(
  topics: readonly { name: string; partitions: number }[],
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

async function configsOf(
  admin: ClusterAdmin,
  side: "source" | "target",
  topics: readonly string[],
  warnings: TopicPlanError[],
): Promise<Map<string, ReadonlyMap<string, string>>> {
  if (topics.length === 0) return new Map();
  try {
    return await admin.describeTopicConfigs(topics);
  } catch (error) {
    if (isReplicatorError(error) && error.retryable) throw error;
    warnings.push({
      topic: "",
      error: new ReplicatorError(
        "TOPIC_CONFIG_FAILED",
        `reading the ${side} topics' configs failed; configs not synced`,
        {
          cause: error,
          details: { side, topics: topics.length },
        },
      ),
    });
    return new Map();
  }
}

/** Partition p to partition p, if the target topic (with `targetPartitions`) can take them all. */
function routesOf(
  d: TopicDrift,
  targetPartitions: number | null,
  errors: TopicPlanError[],
): PartitionRoute[] {
  if (targetPartitions === null || targetPartitions < d.sourcePartitions) {
    errors.push({ topic: d.source, error: tooFewPartitions(d, targetPartitions ?? 0) });
    return [];
  }
  const firstNew = d.partitions === "create" ? 0 : (d.targetPartitions ?? 0);
  return Array.from({ length: d.sourcePartitions }, (_, p) => ({
    source: { topic: d.source, partition: p },
    target: { topic: d.target, partition: p },
    ...(d.partitions !== "ok" && p >= firstNew ? { startFrom: "earliest" as const } : {}),
  }));
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

function byTopic(a: TopicPlanError, b: TopicPlanError): number {
  return compare(a.topic, b.topic);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
