/**
 * One chaos worker process: one replication run with a short time budget, then exit. The chaos
 * driver (scripts/chaos/run.ts) starts these, SIGKILLs them at random instants and starts new
 * ones. Input comes from the environment: CHAOS_CONFIG (the mirror config as JSON),
 * CHAOS_DYNAMODB (the endpoint of the delay proxy in front of DynamoDB Local),
 * CHAOS_DYNAMODB_TIMEOUT_MS, CHAOS_BUDGET_MS, CHAOS_WORKER_ID, CHAOS_DIE_AFTER_ACK (probability
 * of killing itself right after a write was acknowledged) and CHAOS_LOG_FILE (where its info,
 * warn and error lines go, with timestamps, for reading a failed run's story). A "freeze" line on
 * stdin makes it SIGSTOP itself inside its next write (see freezeSoon).
 */
import { appendFileSync } from "node:fs";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { parseConfig } from "../../lib/config/schema.js";
import type { Logger, ReplicationMetrics, TargetWriter } from "../../lib/core/ports.js";
import { isReplicatorError } from "../../lib/errors.js";
import { createReplicator } from "../../lib/replicator.js";
import { writerWith } from "../../test/helpers/writer-with.js";

const config = parseConfig(JSON.parse(process.env.CHAOS_CONFIG ?? "{}"));
const budgetMs = Number(process.env.CHAOS_BUDGET_MS ?? "10000");
const workerId = process.env.CHAOS_WORKER_ID ?? `chaos-${process.pid}`;
const logFile = process.env.CHAOS_LOG_FILE;
// Production's client has no request timeout, so a request held by a latency burst must be able
// to land late: the driver sets this longer than its longest burst. Past it the request is given
// up (the SDK only warns without throwOnRequestTimeout) and the proxy drops what it still held.
const dynamodb = new DynamoDBClient({
  endpoint: process.env.CHAOS_DYNAMODB ?? "http://127.0.0.1:8000",
  region: "us-east-1",
  credentials: { accessKeyId: "local", secretAccessKey: "local" },
  maxAttempts: 2,
  requestHandler: {
    connectionTimeout: 1_000,
    requestTimeout: Number(process.env.CHAOS_DYNAMODB_TIMEOUT_MS ?? "5000"),
    throwOnRequestTimeout: true,
  },
});

/** Appended synchronously: the lines right before a SIGKILL are the ones a failed run needs. */
const trace = (level: string, message: string, fields: object | undefined): void => {
  if (logFile === undefined) return;
  const line = { at: new Date().toISOString(), workerId, level, message, ...fields };
  appendFileSync(logFile, `${JSON.stringify(line)}\n`);
};

// Only what the driver may want to see: errors, and the loss report that must never appear.
const logger: Logger = {
  debug: () => {},
  // A recovery means a kill landed between a write and its checkpoint: the driver counts them.
  info: (message, fields) => {
    trace("info", message, fields);
    if (message.startsWith("records of an unfinished write")) {
      process.stdout.write(`${JSON.stringify({ recovered: { workerId, ...fields } })}\n`);
    }
  },
  warn: (message, fields) => trace("warn", message, fields),
  error: (message, fields) => {
    trace("error", message, fields);
    process.stderr.write(`${JSON.stringify({ workerId, message, ...fields })}\n`);
  },
};
const metrics: ReplicationMetrics = {
  batchCopied: () => {},
  recordsLost: (event) => process.stdout.write(`${JSON.stringify({ lost: event })}\n`),
  partitionError: () => {},
};

// The riskiest instant for exactly-once is right after the target acknowledged a write and before
// its checkpoint: random outside kills rarely land there, so the worker also dies there itself.
const dieAfterAck = Number(process.env.CHAOS_DIE_AFTER_ACK ?? "0");
// Or for certain at the Nth acknowledged write (0: never): see ChaosOptions.dieAtAck.
const dieAtAck = Number(process.env.CHAOS_DIE_AT_ACK ?? "0");
let acks = 0;

// The riskiest instant for fencing is inside a write: after its lease check, before or between
// its produce requests, before its commit. The driver arms a freeze with "freeze" on stdin; the
// next write stops this process itself a few ms in, announcing it first (stdout to a pipe is
// synchronous on Linux, so the driver knows before it can see the stop), and the driver SIGCONTs.
let freezeArmed = false;
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk: string) => {
  for (const command of chunk.split("\n")) {
    if (command === "freeze") freezeArmed = true;
    if (command === "disarm") freezeArmed = false;
  }
});
// Listening must not keep a finished worker alive (stdin is a pipe from the driver: a socket).
(process.stdin as { unref?: () => void }).unref?.();
const FREEZE_WITHIN_WRITE_MS = 15;

function freezeSoon(tp: { topic: string; partition: number }): void {
  freezeArmed = false;
  setTimeout(
    () => {
      trace("info", "freezing itself mid-write", tp);
      process.stdout.write(`${JSON.stringify({ frozen: { workerId, ...tp } })}\n`);
      process.kill(process.pid, "SIGSTOP");
    },
    Math.floor(Math.random() * FREEZE_WITHIN_WRITE_MS),
  );
}

const decorateTarget = (writer: TargetWriter): TargetWriter =>
  writerWith(writer, {
    async write(tp, records, stamp, deadline, runDeadline) {
      let result: Awaited<ReturnType<TargetWriter["write"]>>;
      // The driver picks workers that write for the freezes it wants inside a write.
      process.stdout.write('{"writing":1}\n');
      try {
        const writing = writer.write(tp, records, stamp, deadline, runDeadline);
        if (freezeArmed) freezeSoon(tp);
        result = await writing;
      } catch (error) {
        // A stale holder's write the broker refused: the driver counts them to show freezes reach it.
        if (isReplicatorError(error, "PRODUCER_FENCED")) {
          trace("warn", "write refused: another holder fenced this partition", {
            ...tp,
            error: error.message,
          });
          process.stdout.write(`${JSON.stringify({ fenced: { workerId, ...tp } })}\n`);
        }
        throw error;
      }
      if (++acks === dieAtAck || Math.random() < dieAfterAck) process.kill(process.pid, "SIGKILL");
      return result;
    },
  });

const replicator = createReplicator(config, { dynamodb, logger, metrics, workerId, decorateTarget });
try {
  const summary = await replicator.worker.replicate(Date.now() + budgetMs);
  const records = summary.partitions.reduce((n, p) => n + p.records, 0);
  process.stdout.write(`${JSON.stringify({ workerId, records, endReason: summary.endReason })}\n`);
} finally {
  await replicator.close();
  dynamodb.destroy();
}
