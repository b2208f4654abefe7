/**
 * Scheduled replication: each invocation runs one worker until shortly before Lambda's timeout.
 * The stack starts `Workers` invocations per tick; leases in DynamoDB share the partitions out.
 */
import type { Context } from "aws-lambda";
import { createReplicator, type Replicator } from "../lib/replicator.js";
import { scheduledFunction } from "./runtime.js";

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

async function replicate(replicator: Replicator, context: Context): Promise<ReplicateResult> {
  const deadline = Date.now() + context.getRemainingTimeInMillis() - RUN_SAFETY_MARGIN_MS;
  const summary = await replicator.worker.replicate(deadline);
  return {
    workerId: summary.workerId,
    endReason: summary.endReason,
    partitions: summary.partitions.length,
    records: summary.partitions.reduce((n, p) => n + p.records, 0),
    errors: summary.errors.length,
  };
}

// Connections stay open between invocations of a warm container.
export const handler = scheduledFunction(
  (runtime, security, { logger, metrics }) =>
    createReplicator(runtime.config, { dynamodb: runtime.dynamodb, logger, metrics, security }),
  replicate,
);
