/**
 * Applies topic drift (topic-drift.ts) to the target: creates missing topics with their synced
 * configs, grows topics with too few partitions, and SETs synced configs that differ. One request
 * per topic, so a failure is charged to the topic that caused it; each retried while it fails
 * transiently, within the planning's deadline. Every step is idempotent, so any number of
 * workers may apply the same drift at once.
 */
import { isReplicatorError, ReplicatorError } from "../../errors.js";
import { retryRetryable } from "../retry.js";
import type { DriftReport, PlanTopicsOptions, TopicPlanError } from "./model.js";
import { type TopicDrift, tooFewPartitions } from "./topic-drift.js";

export interface AppliedDrift {
  /** Source topics whose target could not be created or grown: not routed. */
  readonly failed: ReadonlySet<string>;
  /** Target partition counts after applying, by source topic (only those that changed or were re-read). */
  readonly targetPartitions: ReadonlyMap<string, number>;
  readonly errors: TopicPlanError[];
  readonly warnings: TopicPlanError[];
}

export async function applyDrift(options: PlanTopicsOptions, read: DriftReport): Promise<AppliedDrift> {
  const state: State = { failed: new Set(), targetPartitions: new Map(), errors: [], warnings: [] };
  const drift = read.topics;
  const missing = drift.filter((d) => d.partitions === "create");
  if (read.sourceConfigsRead) await Promise.all(missing.map((d) => create(options, d, state)));
  else for (const d of missing) refuseCreate(d, state);
  // Counts are read again after creating: another worker (or a person) may have created the
  // topic first, with fewer partitions; that one is grown like any other.
  const counts = missing.length > state.failed.size ? await targetCounts(options) : null;
  await Promise.all(
    drift
      .filter((d) => !state.failed.has(d.source))
      .map(async (d) => {
        const current = counts?.get(d.target) ?? d.targetPartitions;
        if (current !== null && current < d.sourcePartitions) await grow(options, d, current, state);
        else if (current !== null) state.targetPartitions.set(d.source, current);
        if (d.partitions !== "create" && d.configs.length > 0) await alter(options, d, state);
      }),
  );
  return state;
}

type State = {
  failed: Set<string>;
  targetPartitions: Map<string, number>;
  errors: TopicPlanError[];
  warnings: TopicPlanError[];
};

async function create(options: PlanTopicsOptions, d: TopicDrift, state: State): Promise<void> {
  const { targetAdmin, replicationFactor, retry } = options;
  const configs = new Map(d.configs.map((c) => [c.name, c.to]));
  const spec = {
    name: d.target,
    partitions: d.sourcePartitions,
    replicationFactor,
    ...(configs.size > 0 ? { configs } : {}),
  };
  try {
    // "Already exists" is success, so a retry after a lost answer is harmless.
    await retryRetryable(`creating topic ${d.target}`, () => targetAdmin.createTopics([spec]), retry);
    state.targetPartitions.set(d.source, d.sourcePartitions);
  } catch (error) {
    state.failed.add(d.source);
    state.errors.push({ topic: d.source, error: asCreateError(d, error) });
  }
}

/** Without the source's configs a copy would be made with the target's defaults: not created. */
function refuseCreate(d: TopicDrift, state: State): void {
  state.failed.add(d.source);
  state.errors.push({
    topic: d.source,
    error: new ReplicatorError(
      "TOPIC_CREATE_FAILED",
      `target topic ${d.target} not created: the source topic's configs could not be read, and a copy ` +
        "without them could have the wrong cleanup.policy or retention (grant DescribeConfigs, or set topics.configSync: false)",
      { retryable: false, details: { sourceTopic: d.source, targetTopic: d.target } },
    ),
  });
}

async function grow(options: PlanTopicsOptions, d: TopicDrift, current: number, state: State): Promise<void> {
  const { targetAdmin, retry } = options;
  try {
    // A topic that already has the count (another worker grew it) is not an error.
    await retryRetryable(
      `growing topic ${d.target} to ${d.sourcePartitions} partitions`,
      () => targetAdmin.createPartitions([{ topic: d.target, count: d.sourcePartitions }]),
      retry,
    );
    state.targetPartitions.set(d.source, d.sourcePartitions);
  } catch (error) {
    state.failed.add(d.source);
    state.errors.push({ topic: d.source, error: tooFewPartitions(d, current, error) });
  }
}

/**
 * A refused config change leaves the topic mirrored (a warning): copying goes on with the target's
 * settings, and the next discovery tries again. The one that matters for copying,
 * max.message.bytes, makes itself known as RECORD_REJECTED if a record needs it.
 */
async function alter(options: PlanTopicsOptions, d: TopicDrift, state: State): Promise<void> {
  const { targetAdmin, retry } = options;
  const set = new Map(d.configs.map((c) => [c.name, c.to]));
  try {
    await retryRetryable(
      `setting configs of topic ${d.target}`,
      () => targetAdmin.alterTopicConfigs([{ topic: d.target, set }]),
      retry,
    );
  } catch (error) {
    const cause = isReplicatorError(error) ? error.message : String(error);
    state.warnings.push({
      topic: d.source,
      error: new ReplicatorError(
        "TOPIC_CONFIG_FAILED",
        `setting ${[...set.keys()].join(", ")} on ${d.target} failed: ${cause}`,
        {
          cause: error,
          details: { sourceTopic: d.source, targetTopic: d.target, configs: Object.fromEntries(set) },
        },
      ),
    });
  }
}

async function targetCounts(options: PlanTopicsOptions): Promise<Map<string, number>> {
  return new Map((await options.targetAdmin.listTopics()).map((t) => [t.name, t.partitions]));
}

function asCreateError(d: TopicDrift, error: unknown): ReplicatorError {
  if (isReplicatorError(error)) return error;
  return new ReplicatorError("TOPIC_CREATE_FAILED", `creating target topic ${d.target} failed`, {
    cause: error,
    details: { sourceTopic: d.source, targetTopic: d.target },
  });
}
