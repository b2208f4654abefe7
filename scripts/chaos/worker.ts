/**
 * One chaos worker process: one replication run with a short time budget, then exit. The chaos
 * driver (scripts/chaos/run.ts) starts these, SIGKILLs them at random instants and starts new
 * ones. Input comes from the environment: CHAOS_CONFIG (the mirror config as JSON),
 * CHAOS_DYNAMODB (DynamoDB Local's endpoint), CHAOS_BUDGET_MS and CHAOS_WORKER_ID.
 */
import { parseConfig } from "../../lib/config/schema.js";
import type { Logger, ReplicationMetrics } from "../../lib/core/ports.js";
import { createReplicator } from "../../lib/replicator.js";
import { clientFor } from "../../test/helpers/dynamodb-local.js";

const config = parseConfig(JSON.parse(process.env.CHAOS_CONFIG ?? "{}"));
const budgetMs = Number(process.env.CHAOS_BUDGET_MS ?? "10000");
const workerId = process.env.CHAOS_WORKER_ID ?? `chaos-${process.pid}`;
const dynamodb = clientFor(process.env.CHAOS_DYNAMODB ?? "http://127.0.0.1:8000");

// Only what the driver may want to see: errors, and the loss report that must never appear.
const logger: Logger = {
  debug: () => {},
  // A recovery means a kill landed between a write and its checkpoint: the driver counts them.
  info: (message, fields) => {
    if (message.startsWith("records of an unfinished write")) {
      process.stdout.write(`${JSON.stringify({ recovered: { workerId, ...fields } })}\n`);
    }
  },
  warn: () => {},
  error: (message, fields) => process.stderr.write(`${JSON.stringify({ workerId, message, ...fields })}\n`),
};
const metrics: ReplicationMetrics = {
  batchCopied: () => {},
  recordsLost: (event) => process.stdout.write(`${JSON.stringify({ lost: event })}\n`),
  partitionError: () => {},
};

const replicator = createReplicator(config, { dynamodb, logger, metrics, workerId });
try {
  const summary = await replicator.worker.replicate(Date.now() + budgetMs);
  const records = summary.partitions.reduce((n, p) => n + p.records, 0);
  process.stdout.write(`${JSON.stringify({ workerId, records, endReason: summary.endReason })}\n`);
} finally {
  await replicator.close();
  dynamodb.destroy();
}
