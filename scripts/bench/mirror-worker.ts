/**
 * One kafka-mirror worker in a process of its own, so its CPU time and peak RSS are its own and
 * not the bench's data generator's. The `run --once` path: one worker, `stopWhenCaughtUp`, acks=all;
 * or, with `mode: "continuous"`, a worker that runs until its stdin closes (the latency run).
 *
 * Input: the BENCH_WORKER environment variable (JSON, WorkerJob). Output: one JSON line
 * (WorkerReport) on stdout. Warnings and errors of the worker go to stderr.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { parseConfig } from "../../lib/config/schema.js";
import type { LogFields, Logger, ReplicationMetrics } from "../../lib/core/ports.js";
import { createReplicator } from "../../lib/replicator.js";

export interface WorkerJob {
  readonly mode: "once" | "continuous";
  readonly sourceBrokers: readonly string[];
  readonly targetBrokers: readonly string[];
  readonly topic: string;
  readonly leaseTable: string;
  readonly dynamodbEndpoint: string;
}

export interface WorkerReport {
  readonly endReason: string;
  readonly caughtUp: boolean;
  readonly records: number;
  readonly bytes: number;
  /** Batches copied, i.e. produce requests and lease checkpoints. */
  readonly batches: number;
  readonly errors: number;
  /** Wall time of replicate() alone (no process start, no module loading). */
  readonly elapsedMs: number;
  /** User + system CPU time of the process during replicate(). */
  readonly cpuMs: number;
  /** Peak resident set size of the whole process. */
  readonly maxRssMb: number;
}

class StderrLogger implements Logger {
  debug(): void {}
  info(): void {}
  warn(message: string, fields?: LogFields): void {
    process.stderr.write(`[worker warn] ${message} ${safeJson(fields)}\n`);
  }
  error(message: string, fields?: LogFields): void {
    process.stderr.write(`[worker error] ${message} ${safeJson(fields)}\n`);
  }
}

function safeJson(fields: LogFields | undefined): string {
  try {
    return JSON.stringify(fields ?? {}, (_k, v: unknown) => (v instanceof Error ? v.message : v));
  } catch {
    return "";
  }
}

class CountingMetrics implements ReplicationMetrics {
  batches = 0;
  errors = 0;
  batchCopied(): void {
    this.batches++;
  }
  recordsLost(): void {
    this.errors++;
  }
  partitionError(): void {
    this.errors++;
  }
}

async function main(): Promise<void> {
  const job = JSON.parse(process.env.BENCH_WORKER ?? "null") as WorkerJob | null;
  if (job === null) throw new Error("BENCH_WORKER is not set");
  const config = parseConfig({
    source: { brokers: [...job.sourceBrokers], clientId: "bench-mirror" },
    target: { brokers: [...job.targetBrokers], clientId: "bench-mirror" },
    topics: { whitelist: job.topic },
    leases: { table: job.leaseTable },
  });
  const dynamodb = new DynamoDBClient({
    endpoint: job.dynamodbEndpoint,
    region: "us-east-1",
    // DynamoDB Local keeps one namespace per access key: the same key as the bench's table creator.
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
  });
  const metrics = new CountingMetrics();
  const replicator = createReplicator(config, { dynamodb, logger: new StderrLogger(), metrics });
  const stop = new AbortController();
  if (job.mode === "continuous") {
    process.stdin.on("end", () => stop.abort());
    process.stdin.on("close", () => stop.abort());
    process.stdin.resume();
  }
  try {
    const cpu = process.cpuUsage();
    const started = performance.now();
    const summary = await replicator.worker.replicate(Date.now() + 3_600_000, {
      stopWhenCaughtUp: job.mode === "once",
      signal: stop.signal,
    });
    const elapsedMs = performance.now() - started;
    const used = process.cpuUsage(cpu);
    const report: WorkerReport = {
      endReason: summary.endReason,
      caughtUp: summary.caughtUp,
      records: summary.partitions.reduce((sum, p) => sum + p.records, 0),
      bytes: summary.partitions.reduce((sum, p) => sum + p.bytes, 0),
      batches: metrics.batches,
      errors: metrics.errors + summary.errors.length,
      elapsedMs,
      cpuMs: (used.user + used.system) / 1000,
      maxRssMb: process.resourceUsage().maxRSS / 1024,
    };
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } finally {
    await replicator.close();
    dynamodb.destroy();
    process.stdin.pause();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench worker failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});
