/**
 * Topic planning (README "Topics"): which source partitions are mirrored, where each lands, and the
 * target topics brought in line first (created, grown, configs synced). Imports lib/core's root
 * (model.ts, ports.ts, retry.ts) and lib/errors.ts; nothing in the pump or the run loop.
 *
 *   model.ts        the shared types: DriftReport, TopicPlan, PartitionRoute, TopicPlanError
 *   planner.ts      readDrift (changes nothing) and planTopics (applies the drift, then routes)
 *   topic-drift.ts  the drift of one topic pair: missing, too few partitions, configs that differ
 *   plan-apply.ts   applying a drift: create, grow, set configs, each retried within the planning
 *   config-sync.ts  which topic configs are synced, and the policy's defaults
 */
export type { DriftReport, PartitionRoute, PlanTopicsOptions, TopicPlan, TopicPlanError } from "./model.js";
export { planTopics, readDrift } from "./planner.js";
