/**
 * Scheduled lag measurement: publishes lag in records and seconds per topic (partitions nobody
 * holds included) and creates lease items for newly matching topics, so a topic added to the
 * source or the whitelist starts replicating within one tick.
 */
import type { Context } from "aws-lambda";
import { systemClock } from "../lib/core/clock.js";
import { partitionKey } from "../lib/core/model.js";
import type { ClusterAdmin, LeaseStore, SourceReader } from "../lib/core/ports.js";
import { DynamoDbLeaseStore } from "../lib/dynamodb/lease-store.js";
import { describeError } from "../lib/errors.js";
import { KafkaClusterAdmin } from "../lib/kafka/cluster-admin.js";
import { KafkaSourceReader } from "../lib/kafka/source-reader.js";
import { measureLag } from "../lib/lag/lag-monitor.js";
import { kafkaConnectionOptions, topicSelectorOf } from "../lib/replicator.js";
import type { ClusterSecurity } from "../lib/secrets/cluster-security.js";
import type { TopicSelector } from "../lib/topics/selection.js";
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
}

interface LagMonitor {
  readonly sourceAdmin: ClusterAdmin;
  readonly source: SourceReader;
  readonly leases: LeaseStore;
  readonly mapping: TopicSelector;
  readonly startFrom: "earliest" | "latest";
  readonly stallAfterMs: number;
  close(): Promise<void>;
}

function connect(
  runtime: Runtime,
  security: ClusterSecurity,
  { logger, metrics }: FunctionParts,
): LagMonitor {
  const { config } = runtime;
  const connection = kafkaConnectionOptions(config.source, logger, security.source);
  const stallAfter = Number(process.env[STALL_AFTER_VARIABLE] || DEFAULT_STALL_AFTER_MS);
  const sourceAdmin = new KafkaClusterAdmin(connection);
  const source = new KafkaSourceReader(connection);
  return {
    sourceAdmin,
    source,
    leases: new DynamoDbLeaseStore({
      client: runtime.dynamodb,
      tableName: config.leases.table,
      logger,
      metrics,
    }),
    mapping: topicSelectorOf(config),
    startFrom: config.worker.startFrom,
    stallAfterMs: Number.isFinite(stallAfter) && stallAfter > 0 ? stallAfter : DEFAULT_STALL_AFTER_MS,
    async close() {
      await Promise.allSettled([sourceAdmin.close(), source.close()]);
    },
  };
}

async function lag(
  monitor: LagMonitor,
  context: Pick<Context, "getRemainingTimeInMillis">,
  { logger, metrics }: FunctionParts,
): Promise<LagResult> {
  const deadline = systemClock.now() + context.getRemainingTimeInMillis() - LAG_SAFETY_MARGIN_MS;
  const { report, discovered } = await measureLag({
    ...monitor,
    logger,
    retry: {
      clock: systemClock,
      deadline,
      onRetry: (what, error, attempt, delayMs) =>
        logger.warn(`${what} failed, retrying`, { attempt, delayMs, ...describeError(error) }),
    },
  });
  metrics.lagMeasured(report);
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
  };
}

export const handler = scheduledFunction(connect, lag);
