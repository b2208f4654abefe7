/**
 * A worker process that freezes itself mid-write with a real SIGSTOP, for
 * test/integration/exactly-once/frozen-writer.test.ts. It runs one replication with real Kafka
 * adapters and the DynamoDB lease store; on its FREEZE_AT-th pipelined produce it prints a
 * `{"frozen":…}` line and stops the whole process, until the test sends SIGCONT.
 *
 * Where it freezes (FREEZE_POINT):
 * - "before-send": synchronously inside the writer's "produce sent" debug log, which comes after
 *   the writer's last deadline check and before the produce requests go out: the window a lease
 *   alone cannot close (the requests leave the moment the process wakes).
 * - "in-flight": FREEZE_DELAY_MS later, while the produce answers are held back by the target
 *   broker's RTT: the records are in the log, inside a transaction not yet committed.
 *
 * Input (environment): FREEZE_CONFIG (the mirror config as JSON), FREEZE_DYNAMODB (endpoint),
 * FREEZE_WORKER_ID, FREEZE_BUDGET_MS, FREEZE_AT, FREEZE_POINT, FREEZE_DELAY_MS. Every log line
 * goes to stdout as JSON (`{"level":…,"message":…,…}`), so the test can read the worker's story.
 */
import { writeSync } from "node:fs";
import { parseConfig } from "../../lib/config/schema.js";
import type { LogFields, Logger, ReplicationMetrics, TargetWriter } from "../../lib/core/ports.js";
import { isReplicatorError } from "../../lib/errors.js";
import { createReplicator } from "../../lib/replicator.js";
import { clientFor } from "./dynamodb-local.js";
import { writerWith } from "./writer-with.js";

const config = parseConfig(JSON.parse(process.env.FREEZE_CONFIG ?? "{}"));
const workerId = process.env.FREEZE_WORKER_ID ?? `frozen-${process.pid}`;
const budgetMs = Number(process.env.FREEZE_BUDGET_MS ?? "30000");
const freezeAt = Number(process.env.FREEZE_AT ?? "1");
const point = process.env.FREEZE_POINT === "in-flight" ? "in-flight" : "before-send";
const delayMs = Number(process.env.FREEZE_DELAY_MS ?? "200");
const dynamodb = clientFor(process.env.FREEZE_DYNAMODB ?? "http://127.0.0.1:8000");

/** Synchronous, so a line written right before the SIGSTOP is out before the process stops. */
function emit(line: object): void {
  writeSync(1, `${JSON.stringify({ at: Date.now(), workerId, ...line })}\n`);
}

function freeze(fields: LogFields): void {
  emit({ frozen: point, ...fields });
  process.kill(process.pid, "SIGSTOP");
  emit({ woke: point });
}

let produces = 0;
function onProduceSent(fields: LogFields): void {
  produces++;
  if (produces !== freezeAt) return;
  if (point === "before-send") freeze(fields);
  else setTimeout(() => freeze(fields), delayMs);
}

const logger: Logger = {
  debug: (message, fields = {}) => {
    if (message === "produce sent") onProduceSent(fields);
  },
  info: (message, fields = {}) => emit({ level: "info", message, ...fields }),
  warn: (message, fields = {}) => emit({ level: "warn", message, ...fields }),
  error: (message, fields = {}) => emit({ level: "error", message, ...fields }),
};
const metrics: ReplicationMetrics = {
  batchCopied: (event) => emit({ level: "metric", message: "batch copied", ...event }),
  recordsLost: (event) => emit({ level: "metric", message: "records lost", ...event }),
  partitionError: (event) => emit({ level: "metric", message: "partition error", ...event }),
};

// The pump stops a fenced partition as "lease lost" without naming the refusal: name it here.
const decorateTarget = (writer: TargetWriter): TargetWriter =>
  writerWith(writer, {
    async write(tp, records, stamp, deadline, runDeadline) {
      try {
        return await writer.write(tp, records, stamp, deadline, runDeadline);
      } catch (error) {
        emit({ level: "error", message: "write refused", ...refusal(error) });
        throw error;
      }
    },
  });

function refusal(error: unknown): LogFields {
  if (isReplicatorError(error)) return { code: error.code, error: error.message };
  return { error: String(error) };
}

const replicator = createReplicator(config, { dynamodb, logger, metrics, workerId, decorateTarget });
try {
  const summary = await replicator.worker.replicate(Date.now() + budgetMs);
  emit({ level: "info", message: "run ended", endReason: summary.endReason, errors: summary.errors });
} finally {
  await replicator.close();
  dynamodb.destroy();
}
