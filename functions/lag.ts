/**
 * Scheduled lag measurement: publishes lag in records and seconds per topic (partitions nobody
 * holds included) and creates lease items for newly matching topics, so a topic added to the
 * source or the whitelist starts replicating within one tick.
 */
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import middy from "@middy/core";
import { DynamoDbLeaseStore } from "../lib/dynamodb/lease-store.js";
import { KafkaClusterAdmin } from "../lib/kafka/cluster-admin.js";
import { KafkaSourceReader } from "../lib/kafka/source-reader.js";
import { measureLag } from "../lib/lag/lag-monitor.js";
import { EmfMetrics } from "../lib/observability/emf-metrics.js";
import { flushMetrics } from "../lib/observability/flush-metrics.js";
import { PowertoolsLoggerAdapter } from "../lib/observability/powertools-logger.js";
import { createTopicSelector } from "../lib/topics/selection.js";
import { createRuntime, once, STALL_AFTER_VARIABLE, serviceName } from "./runtime.js";

/** Lag without progress for this long counts as stalled. @default 5 minutes */
const DEFAULT_STALL_AFTER_MS = 300_000;

export interface LagResult {
  readonly partitions: number;
  readonly discovered: number;
  readonly maxLagRecords: number;
  readonly maxLagSeconds: number;
  readonly stalledPartitions: number;
}

const logger = new PowertoolsLoggerAdapter();
const metrics = new EmfMetrics({ serviceName: serviceName() });

const monitor = once(async () => {
  const runtime = await createRuntime(logger);
  const { config } = runtime;
  const connection = {
    brokers: config.source.brokers,
    clientId: config.source.clientId,
    connectionTimeoutMs: config.source.connectionTimeoutMs,
    requestTimeoutMs: config.source.requestTimeoutMs,
    logger,
    ...runtime.security.source,
  };
  const stallAfter = Number(process.env[STALL_AFTER_VARIABLE] || DEFAULT_STALL_AFTER_MS);
  return {
    sourceAdmin: new KafkaClusterAdmin(connection),
    source: new KafkaSourceReader(connection),
    leases: new DynamoDbLeaseStore({
      client: runtime.dynamodb,
      tableName: config.leases.table,
      logger,
      metrics,
    }),
    mapping: createTopicSelector({
      whitelist: config.topics.whitelist,
      blacklist: config.topics.blacklist,
      rename: config.topics.rename,
      sourceAlias: config.source.alias,
      targetAlias: config.target.alias,
    }),
    startFrom: config.worker.startFrom,
    stallAfterMs: Number.isFinite(stallAfter) && stallAfter > 0 ? stallAfter : DEFAULT_STALL_AFTER_MS,
  };
});

async function lag(): Promise<LagResult> {
  const { report, discovered } = await measureLag({ ...(await monitor()), logger });
  metrics.lagMeasured(report);
  if (discovered.length > 0) {
    logger.info("new partitions discovered", {
      partitions: discovered.map((tp) => `${tp.topic}/${tp.partition}`),
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

export const handler = middy()
  .use(injectLambdaContext(logger.powertools))
  .use(flushMetrics(metrics))
  .handler(lag);
