/**
 * Scheduled replication: each invocation runs one worker until shortly before Lambda's timeout.
 * The stack starts `Workers` invocations per tick; leases in DynamoDB share the partitions out.
 */
import type { Context } from "aws-lambda";
import type { RunSummary } from "../lib/core/run-summary.js";
import { ReplicatorError } from "../lib/errors.js";
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

/** What `replicate` needs of a Replicator (tests give a scripted worker). */
export interface ReplicationRunner {
  readonly workerId: string;
  readonly worker: { replicate(deadline: number): Promise<RunSummary> };
}

/**
 * One run until the deadline left by `context`, read afresh on each call: the call RefreshOnAuthFailure
 * repeats after a reconnect gets only what the first one left.
 */
export async function replicate(replicator: ReplicationRunner, context: Context): Promise<ReplicateResult> {
  const deadline = Date.now() + context.getRemainingTimeInMillis() - RUN_SAFETY_MARGIN_MS;
  // A repeat after a full run has no time left: the rebuilt clients are for the next invocation.
  if (deadline <= Date.now()) {
    return { workerId: replicator.workerId, endReason: "deadline", partitions: 0, records: 0, errors: 0 };
  }
  const summary = await replicator.worker.replicate(deadline);
  throwIfRefused(summary);
  return {
    workerId: summary.workerId,
    endReason: summary.endReason,
    partitions: summary.partitions.length,
    records: summary.partitions.reduce((n, p) => n + p.records, 0),
    errors: summary.errors.length,
  };
}

/**
 * A connection opened during the run (a new broker after a leader move) may be refused after a
 * rotation while the older ones still work; that ends a partition, not the run. Thrown after the
 * run (its leases are released by then) so RefreshOnAuthFailure re-reads the secret; else those
 * partitions would fail every invocation until the container is recycled.
 */
function throwIfRefused(summary: RunSummary): void {
  const refused = summary.errors.filter((e) => e.code === "AUTHENTICATION_FAILED");
  const first = refused[0];
  if (first === undefined) return;
  throw new ReplicatorError(
    "AUTHENTICATION_FAILED",
    `a cluster refused our credentials for ${refused.length} partition(s) during the run: ${first.message}`,
    {
      details: {
        workerId: summary.workerId,
        partitions: refused.map((e) => ({ topic: e.topic, partition: e.partition })),
      },
    },
  );
}

// Connections stay open between invocations of a warm container.
export const handler = scheduledFunction<Replicator, ReplicateResult>(
  (runtime, security, { logger, metrics }) =>
    createReplicator(runtime.config, { dynamodb: runtime.dynamodb, logger, metrics, security }),
  replicate,
);
