/**
 * Drift between a source topic and its target copy: whether the target is missing, has too few
 * partitions, or differs in the configs that are synced. Pure and the only place that decides
 * it: the planner applies it on every discovery and `kafka-mirror plan` prints it.
 */
import { ReplicatorError } from "../../errors.js";
import {
  COMPRESSION_TYPE,
  type ConfigChange,
  type ConfigSyncPolicy,
  configChanges,
  isSynced,
  neverSyncedReason,
} from "./config-sync.js";

/** A selected source topic and where it lands. */
export interface MappedTopic {
  readonly source: string;
  readonly target: string;
  readonly partitions: number;
}

/**
 * - create: the target topic does not exist; it is created with the source's partition count
 *   and synced configs.
 * - grow: the target has fewer partitions; CreatePartitions adds the missing ones.
 * - ok: the target has as many partitions or more (more are left as they are: shrinking is
 *   impossible in Kafka, and p still goes to p).
 */
export type PartitionAction = "create" | "grow" | "ok";

/** A setting the source topic has and its copy does not get, with the reason. */
export interface UnsyncedConfig {
  readonly name: string;
  readonly source: string;
  readonly target: string | null;
  readonly why: string;
}

export interface TopicDrift {
  readonly source: string;
  readonly target: string;
  readonly sourcePartitions: number;
  /** Null when the target topic does not exist. */
  readonly targetPartitions: number | null;
  readonly partitions: PartitionAction;
  /** What sync sets on the target (for "create": the configs it is created with). */
  readonly configs: readonly ConfigChange[];
  /** Settings only the target has: never deleted. */
  readonly targetOnly: readonly string[];
  /** Source settings that differ on the target and are not copied, and why. */
  readonly unsynced: readonly UnsyncedConfig[];
  /**
   * The target's compression.type after sync when it names a codec other than target.compression
   * (ConfigSyncPolicy.compressionType): its broker recompresses every batch we send. Else null.
   */
  readonly recompressedAs: string | null;
}

export interface DriftInput {
  readonly topic: MappedTopic;
  /** Partitions of the target topic, undefined when it does not exist. */
  readonly targetPartitions: number | undefined;
  /** Topic-level configs set on the source topic (empty when unknown or sync is off). */
  readonly sourceConfigs: ReadonlyMap<string, string>;
  /** Topic-level configs set on the target topic (empty when it does not exist). */
  readonly targetConfigs: ReadonlyMap<string, string>;
  readonly policy: ConfigSyncPolicy;
}

export function topicDrift({
  topic,
  targetPartitions,
  sourceConfigs,
  targetConfigs,
  policy,
}: DriftInput): TopicDrift {
  const partitions: PartitionAction =
    targetPartitions === undefined ? "create" : targetPartitions < topic.partitions ? "grow" : "ok";
  const current = partitions === "create" ? new Map<string, string>() : targetConfigs;
  const configs = configChanges(sourceConfigs, current, policy);
  return {
    source: topic.source,
    target: topic.target,
    sourcePartitions: topic.partitions,
    targetPartitions: targetPartitions ?? null,
    partitions,
    configs,
    targetOnly: [...targetConfigs.keys()].filter((name) => !sourceConfigs.has(name)).sort(),
    unsynced: unsyncedConfigs(sourceConfigs, targetConfigs, policy),
    recompressedAs: recompressedAs(current, configs, policy),
  };
}

/** TopicDrift.recompressedAs: "producer" (Kafka's default) keeps the batches' own codec. */
function recompressedAs(
  current: ReadonlyMap<string, string>,
  configs: readonly ConfigChange[],
  policy: ConfigSyncPolicy,
): string | null {
  if (policy.compressionType === undefined) return null;
  const after = configs.find((c) => c.name === COMPRESSION_TYPE)?.to ?? current.get(COMPRESSION_TYPE);
  return after === undefined || after === "producer" || after === policy.compressionType ? null : after;
}

/**
 * The workers' warning for TopicDrift.recompressedAs (plan prints its own line): the setting is
 * the target's alone or kept out of sync, so only a person can change it.
 */
export function recompressionWarning(d: TopicDrift, codec: string): ReplicatorError | null {
  if (d.recompressedAs === null) return null;
  return new ReplicatorError(
    "TOPIC_CONFIG_FAILED",
    `compression.type=${d.recompressedAs} on ${d.target} makes its broker recompress the ${codec} batches we send (target.compression): set it to ${codec} or producer`,
    { details: { sourceTopic: d.source, targetTopic: d.target, compressionType: d.recompressedAs, codec } },
  );
}

/** True when nothing would be created, grown or set. */
export function inSync(drift: TopicDrift): boolean {
  return drift.partitions === "ok" && drift.configs.length === 0;
}

function unsyncedConfigs(
  source: ReadonlyMap<string, string>,
  target: ReadonlyMap<string, string>,
  policy: ConfigSyncPolicy,
): UnsyncedConfig[] {
  const out: UnsyncedConfig[] = [];
  for (const [name, value] of source) {
    const current = target.get(name) ?? null;
    if (isSynced(name, policy) || current === value) continue;
    out.push({ name, source: value, target: current, why: whyNotSynced(name, policy) });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function whyNotSynced(name: string, policy: ConfigSyncPolicy): string {
  if (!policy.enabled) return "config sync is off (topics.configSync: false)";
  const never = neverSyncedReason(name);
  if (never !== null) return `never copied: ${never}`;
  if (policy.deny.includes(name)) return "in topics.configSyncDeny";
  return "not in topics.configSyncAllow";
}

/** The error of a target that has, and could not be given, as many partitions as its source. */
export function tooFewPartitions(d: TopicDrift, targetPartitions: number, cause?: unknown): ReplicatorError {
  return new ReplicatorError(
    "TARGET_PARTITIONS_TOO_FEW",
    `target topic ${d.target} has ${targetPartitions} partitions and could not be grown to the ${d.sourcePartitions} of source topic ${d.source}`,
    {
      ...(cause === undefined ? {} : { cause }),
      details: {
        sourceTopic: d.source,
        targetTopic: d.target,
        sourcePartitions: d.sourcePartitions,
        targetPartitions,
      },
    },
  );
}
