/**
 * The shared types of the planning (plan/): what it reads (DriftReport), decides (TopicPlan,
 * PartitionRoute) and reports (TopicPlanError). The pump and the run loop read routes from here,
 * so nothing outside plan/ imports the planner for a type.
 */
import type { ReplicatorError } from "../../errors.js";
import type { StartFrom, TopicPartition } from "../model.js";
import type { ClusterAdmin, TopicMapping } from "../ports.js";
import type { KafkaRetry } from "../retry.js";
import type { ConfigSyncPolicy } from "./config-sync.js";
import type { TopicDrift } from "./topic-drift.js";

export interface DriftOptions {
  readonly sourceAdmin: ClusterAdmin;
  readonly targetAdmin: ClusterAdmin;
  readonly mapping: TopicMapping;
  readonly configSync: ConfigSyncPolicy;
}

export interface PlanTopicsOptions extends DriftOptions {
  /** Replication factor of target topics this planner creates. */
  readonly replicationFactor: number;
  /**
   * How a creation, growth or config change that failed transiently is retried: within the
   * planning's deadline, so a broker that blinked does not leave the topic out of the whole run.
   * The reads are not retried here; the caller retries the whole planning (it is idempotent).
   */
  readonly retry: KafkaRetry;
}

export interface PartitionRoute {
  readonly source: TopicPartition;
  readonly target: TopicPartition;
  /**
   * "earliest" for a partition new to the mirror (its target was created or grown by this
   * planning, or a running worker discovered it): whatever worker.startFrom says, nothing
   * written to it before it was noticed may be skipped. Absent: worker.startFrom.
   */
  readonly startFrom?: StartFrom;
}

export interface TopicPlanError {
  /** The source topic concerned; "" for a problem of the whole planning. */
  readonly topic: string;
  readonly error: ReplicatorError;
}

export interface DriftReport {
  /** One per selected, routable source topic, sorted by source name. */
  readonly topics: TopicDrift[];
  /** Topics that cannot be mirrored at all (mapping failed, target name collision). */
  readonly errors: TopicPlanError[];
  /** Problems that do not stop copying (configs that could not be read). */
  readonly warnings: TopicPlanError[];
  /**
   * False when config sync is on but the source's configs could not be read: missing targets
   * are then not created (a compacted source would get a delete-policy copy).
   */
  readonly sourceConfigsRead: boolean;
  /** When the mapping selects no source topic at all (and none failed to map): why, for the operator. */
  readonly emptySelection: string | null;
}

export interface TopicPlan {
  /** Sorted by source topic, then partition. */
  readonly partitions: PartitionRoute[];
  /** One entry per source topic left out; the other topics proceed. */
  readonly errors: TopicPlanError[];
  /** Problems that leave the topic mirrored (a config change the target refused). */
  readonly warnings: TopicPlanError[];
  /** The drift found before it was applied. */
  readonly drift: TopicDrift[];
  /** DriftReport.emptySelection. */
  readonly emptySelection: string | null;
}
