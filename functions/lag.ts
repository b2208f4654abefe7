/**
 * Scheduled lag measurement: publishes lag in records and seconds per topic (partitions nobody
 * holds included) and creates lease items for newly matching topics, so a topic added to the
 * source or the whitelist starts replicating within one tick. Then, when `groups.whitelist` is
 * set, the consumer-group offset sync (lib/offsets/sync-step.ts): the same minute's schedule,
 * the same source connection and lease table, so no second function to deploy and watch; a
 * failed sync is counted (GroupSyncErrors), never a failed lag run.
 */
import type { Context } from "aws-lambda";
import { systemClock } from "../lib/core/clock.js";
import { partitionKey } from "../lib/core/model.js";
import type { ClusterAdmin, LeaseStore, SourceReader } from "../lib/core/ports.js";
import { describeError } from "../lib/errors.js";
import { measureLag } from "../lib/lag/lag-monitor.js";
import { type GroupSyncStep, NO_SYNC, runGroupSync } from "../lib/offsets/sync-step.js";
import { topicSelectorOf } from "../lib/replicator.js";
import type { ClusterSecurity } from "../lib/secrets/cluster-security.js";
import type { TopicSelector } from "../lib/topics/selection.js";
import { closeGroupSyncStep, clusterSide, createLeaseStore, groupSyncStep } from "../lib/wiring.js";
import { type FunctionParts, type Runtime, STALL_AFTER_VARIABLE, scheduledFunction } from "./runtime.js";

/** Lag without progress for this long counts as stalled. @default 5 minutes */
const DEFAULT_STALL_AFTER_MS = 300_000;

/** Retries stop this long before the invocation's timeout, leaving time to publish the report. */
export const LAG_SAFETY_MARGIN_MS = 5_000;

export interface LagResult {
  readonly partitions: number;
  readonly discovered: number;
  readonly maxLagRecords: number;
  readonly maxLagSeconds: number;
  readonly stalledPartitions: number;
  readonly groupsSynced: number;
  readonly groupSyncErrors: number;
}

interface LagMonitor {
  readonly sourceAdmin: ClusterAdmin;
  readonly source: SourceReader;
  readonly leases: LeaseStore;
  readonly mapping: TopicSelector;
  readonly startFrom: "earliest" | "latest";
  readonly stallAfterMs: number;
  /** Null when no group is selected (groups.whitelist unset) or records carry no provenance (wiring's groupSyncStep). */
  readonly groupSync: GroupSyncStep | null;
  close(): Promise<void>;
}

function connect(
  runtime: Runtime,
  security: ClusterSecurity,
  { logger, metrics }: FunctionParts,
): LagMonitor {
  const { config } = runtime;
  const sourceSide = clusterSide(config, "source", { logger, security: security.source });
  const stallAfter = Number(process.env[STALL_AFTER_VARIABLE] || DEFAULT_STALL_AFTER_MS);
  const sourceAdmin = sourceSide.admin();
  const source = sourceSide.reader();
  // The sync's clients, built once per container like the others.
  const groupSync = groupSyncStep(config, { logger, security });
  return {
    sourceAdmin,
    source,
    leases: createLeaseStore(config, { dynamodb: runtime.dynamodb }, { logger, metrics }),
    mapping: topicSelectorOf(config),
    startFrom: config.worker.startFrom,
    stallAfterMs: Number.isFinite(stallAfter) && stallAfter > 0 ? stallAfter : DEFAULT_STALL_AFTER_MS,
    groupSync,
    async close() {
      await Promise.allSettled([sourceAdmin.close(), source.close(), closeGroupSyncStep(groupSync)]);
    },
  };
}

async function lag(
  monitor: LagMonitor,
  context: Pick<Context, "getRemainingTimeInMillis">,
  { logger, metrics }: FunctionParts,
): Promise<LagResult> {
  const deadline = systemClock.now() + context.getRemainingTimeInMillis() - LAG_SAFETY_MARGIN_MS;
  const retry = {
    clock: systemClock,
    deadline,
    onRetry: (what: string, error: unknown, attempt: number, delayMs: number) =>
      logger.warn(`${what} failed, retrying`, { attempt, delayMs, ...describeError(error) }),
  };
  const { report, discovered } = await measureLag({ ...monitor, logger, retry });
  metrics.lagMeasured(report);
  // Published every run, zeros included: the sync alarm treats silence as a failure.
  const sync =
    monitor.groupSync === null
      ? NO_SYNC
      : await runGroupSync(monitor.groupSync, { ...monitor, logger, retry });
  metrics.groupSyncMeasured(sync);
  if (discovered.length > 0) {
    logger.info("new partitions discovered", {
      partitions: discovered.map(partitionKey),
    });
  }
  return {
    partitions: report.partitions.length,
    discovered: discovered.length,
    maxLagRecords: report.maxLagRecords,
    maxLagSeconds: report.maxLagSeconds,
    stalledPartitions: report.stalledPartitions,
    groupsSynced: sync.synced,
    groupSyncErrors: sync.failed,
  };
}

export const handler = scheduledFunction("lag", connect, lag);
