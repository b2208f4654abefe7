/**
 * Scheduled replication: each invocation runs one worker until shortly before Lambda's timeout.
 * The stack starts `Workers` invocations per tick; leases in DynamoDB share the partitions out.
 */
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import middy from "@middy/core";
import type { Context } from "aws-lambda";
import { EmfMetrics } from "../lib/observability/emf-metrics.js";
import { flushMetrics } from "../lib/observability/flush-metrics.js";
import { PowertoolsLoggerAdapter } from "../lib/observability/powertools-logger.js";
import { createReplicator } from "../lib/replicator.js";
import { createRuntime, once, serviceName } from "./runtime.js";

/**
 * Time kept free after the worker's deadline: the worker finishes in-flight batches, checkpoints
 * and releases its leases just after the deadline, then metrics are flushed. Writes already stop
 * writeSafetyMarginMs before the deadline, so this only covers DynamoDB calls and the flush.
 */
export const RUN_SAFETY_MARGIN_MS = 10_000;

export interface ReplicateResult {
  readonly workerId: string;
  readonly endReason: string;
  readonly partitions: number;
  readonly records: number;
  readonly errors: number;
}

const logger = new PowertoolsLoggerAdapter();
const metrics = new EmfMetrics({ serviceName: serviceName() });

// Connections stay open between invocations of a warm container.
const replicator = once(async () => {
  const runtime = await createRuntime(logger);
  return createReplicator(runtime.config, {
    dynamodb: runtime.dynamodb,
    logger,
    metrics,
    security: runtime.security,
  });
});

async function replicate(_event: unknown, context: Context): Promise<ReplicateResult> {
  const worker = (await replicator()).worker;
  const deadline = Date.now() + context.getRemainingTimeInMillis() - RUN_SAFETY_MARGIN_MS;
  const summary = await worker.replicate(deadline);
  return {
    workerId: summary.workerId,
    endReason: summary.endReason,
    partitions: summary.partitions.length,
    records: summary.partitions.reduce((n, p) => n + p.records, 0),
    errors: summary.errors.length,
  };
}

export const handler = middy()
  .use(injectLambdaContext(logger.powertools))
  .use(flushMetrics(metrics))
  .handler(replicate);
