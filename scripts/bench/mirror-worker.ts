/**
 * One kafka-mirror worker in a process of its own, so its CPU time and peak RSS are its own and
 * not the bench's data generator's. The `run --once` path: one worker, `stopWhenCaughtUp`, acks=all;
 * leases in the CLI's embedded store; or, with `mode: "continuous"`, a worker that runs until its stdin closes (the latency run).
 *
 * Input: the BENCH_WORKER environment variable (JSON, WorkerJob). Output: one JSON line
 * (WorkerReport) on stdout. Warnings and errors of the worker go to stderr.
 */

import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { CompressionCodec } from "../../lib/config/compression.js";
import { parseConfig } from "../../lib/config/schema.js";
import type { LogFields, Logger, ReplicationMetrics } from "../../lib/core/ports.js";
import { answerPool } from "../../lib/kafka/wire/answer-pool.js";
import { createReplicator, type Replicator } from "../../lib/replicator.js";
import { leaseStoreFor } from "../../lib/wiring.js";
import { GO_LINE, WARM_LINE } from "./worker-protocol.js";

export interface WorkerJob {
  readonly mode: "once" | "continuous";
  readonly sourceBrokers: readonly string[];
  readonly targetBrokers: readonly string[];
  readonly topic: string;
  /** State directory of the embedded lease store (`kafka-mirror run --state-dir`). */
  readonly stateDir: string;
  /** target.copy. @default "records" */
  readonly copy?: "records" | "batches";
  /** target.compression. @default "none" */
  readonly compression?: CompressionCodec;
  /**
   * Copied first (mode "once"), by a replicator of its own in this process and outside every
   * figure of the report: the measured copy then runs warm (BenchOptions.warmupRecords).
   */
  readonly warmupTopic?: string;
  /**
   * The warm-up is copied by the measured copy's replicator instead, which mirrors both topics, as
   * a warm Lambda's earlier invocation would have: the worker says WARM_LINE on stdout and waits
   * for GO_LINE on stdin, so that the bench writes `topic`'s data meanwhile (BenchOptions.warmupShared).
   */
  readonly warmupShared?: boolean;
}

export interface WorkerReport {
  readonly endReason: string;
  readonly caughtUp: boolean;
  readonly records: number;
  readonly bytes: number;
  /** Source batches copied (a write takes several along; checkpoints are fewer: `dynamodb`). */
  readonly batches: number;
  readonly errors: number;
  /** Wall time of replicate() alone (no process start, no module loading). */
  readonly elapsedMs: number;
  /** From replicate() starting to the first batch checkpointed (planning, leases, connections). */
  readonly startupMs: number;
  /** From replicate() starting to the last batch checkpointed: the copy without the caught-up check and wind-down. */
  readonly lastBatchMs: number;
  /** User + system CPU time of the process during replicate(). */
  readonly cpuMs: number;
  /**
   * CPU time and bytes copied over the second half of the copy: from the first CPU sample (see
   * CPU_SAMPLE_BYTES) at or past half of the last sample's bytes to the last sample: the cost per
   * byte without start-up and the wind-down. Not without the JIT's warm-up: V8 kept compiling
   * through the second half of a 1 GiB copy (`perf`: its compiler threads, a fifth of the
   * worker's CPU there), which WorkerJob.warmupTopic takes out. null when that sample is the last.
   */
  readonly secondHalf: { readonly cpuMs: number; readonly bytes: number } | null;
  /** Peak resident set size of the whole process. */
  readonly maxRssMb: number;
  /** Records the warm-up copy copied (WorkerJob.warmupTopic); 0 without one. */
  readonly warmupRecords: number;
  /** Answers read into a buffer a written fetch gave back, new pooled buffers, buffers given back (answer-pool.ts). */
  readonly answers: { readonly reused: number; readonly allocated: number; readonly returned: number };
  /** The lease store's DynamoDB requests during replicate() and the capacity they consumed (CapacityMeter). */
  readonly dynamodb: DynamoDbUse;
}

export interface DynamoDbUse {
  /** Item requests that read (GetItem, Query, ...) and that write. */
  readonly reads: number;
  readonly writes: number;
  readonly readUnits: number;
  readonly writeUnits: number;
}

/** BENCH_WORKER_LOG=info shows the worker's progress with timestamps (for finding stalls). */
const VERBOSE = process.env.BENCH_WORKER_LOG === "info";

class StderrLogger implements Logger {
  debug(): void {}
  info(message: string, fields?: LogFields): void {
    if (VERBOSE) process.stderr.write(`[worker ${Date.now() % 100_000}] ${message} ${safeJson(fields)}\n`);
  }
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

/**
 * Bytes copied between two CPU samples at most. process.cpuUsage() cost about 180 µs a call in
 * this worker (192 ms in 1,058 calls, one per batch, of a 1 GiB copy that spent ~4.5 CPU-s in
 * all), which the worker's CPU figure carried. A sample is taken once a sixteenth of what was
 * copied so far, or this, came since the last: a short copy is sampled at about every batch, a
 * 1 GiB one about 110 times.
 */
const CPU_SAMPLE_BYTES = 16 * 1024 * 1024;

class CountingMetrics implements ReplicationMetrics {
  batches = 0;
  errors = 0;
  firstBatchAt = Number.NaN;
  lastBatchAt = Number.NaN;
  #bytes = 0;
  /** Samples (see CPU_SAMPLE_BYTES): bytes copied so far and the process's CPU µs. */
  readonly #samples: { bytes: number; cpuUs: number }[] = [];
  /** Forgets a shared warm-up copy (WorkerJob.warmupShared). */
  reset(): void {
    this.batches = 0;
    this.errors = 0;
    this.firstBatchAt = Number.NaN;
    this.lastBatchAt = Number.NaN;
    this.#bytes = 0;
    this.#samples.length = 0;
  }
  batchCopied(event: { bytes: number }): void {
    this.batches++;
    const now = performance.now();
    if (this.batches === 1) this.firstBatchAt = now;
    this.lastBatchAt = now;
    this.#bytes += event.bytes;
    const last = this.#samples.at(-1);
    if (last === undefined || this.#bytes - last.bytes >= Math.min(CPU_SAMPLE_BYTES, this.#bytes / 16)) {
      const { user, system } = process.cpuUsage();
      this.#samples.push({ bytes: this.#bytes, cpuUs: user + system });
    }
  }
  /** WorkerReport.secondHalf, between samples: up to CPU_SAMPLE_BYTES short of the last batch. */
  secondHalf(): WorkerReport["secondHalf"] {
    const last = this.#samples.at(-1);
    const half = this.#samples.find((p) => last !== undefined && p.bytes * 2 >= last.bytes);
    if (last === undefined || half === undefined || half === last) return null;
    return { cpuMs: (last.cpuUs - half.cpuUs) / 1000, bytes: last.bytes - half.bytes };
  }
  recordsLost(): void {
    this.errors++;
  }
  partitionError(): void {
    this.errors++;
  }
}

/** Commands that read, billed in read units; every other command that consumes capacity writes. */
const READ_COMMANDS = new Set([
  "GetItemCommand",
  "BatchGetItemCommand",
  "QueryCommand",
  "ScanCommand",
  "TransactGetItemsCommand",
]);
/** Commands that take ReturnConsumedCapacity (table and admin calls do not). */
const METERED_COMMANDS = new Set([
  ...READ_COMMANDS,
  "PutItemCommand",
  "UpdateItemCommand",
  "DeleteItemCommand",
  "BatchWriteItemCommand",
  "TransactWriteItemsCommand",
]);

type Capacity = { CapacityUnits?: number } | { CapacityUnits?: number }[] | undefined;

/**
 * What the lease store's DynamoDB requests would bill on demand. Every item request asks for its
 * ConsumedCapacity (ReturnConsumedCapacity TOTAL: nothing in lib/ sets or reads it), which the
 * embedded store, dynalite, computes by DynamoDB's rules (item sizes by its own count, not checked
 * against DynamoDB's): a write is a unit per KiB of the larger of the item before and after it, a
 * read a unit per 4 KiB, half that when eventually consistent. A
 * write refused by its condition is billed too and answers no capacity: counted as one unit, the
 * least DynamoDB bills for it. Checkpoints are one per partition per leases.checkpointIntervalMs,
 * not one per batch, so the units per GiB depend on the rate: this measures them at the bench's.
 */
class CapacityMeter implements DynamoDbUse {
  reads = 0;
  writes = 0;
  readUnits = 0;
  writeUnits = 0;
  attach(client: DynamoDBClient): void {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const command = context.commandName ?? "";
        if (!METERED_COMMANDS.has(command)) return next(args);
        const read = READ_COMMANDS.has(command);
        if (read) this.reads++;
        else this.writes++;
        try {
          const result = await next({
            ...args,
            input: { ...(args.input as object), ReturnConsumedCapacity: "TOTAL" },
          });
          this.#add(read, (result.output as { ConsumedCapacity?: Capacity }).ConsumedCapacity);
          return result;
        } catch (error) {
          if (!read && (error as { name?: unknown }).name === "ConditionalCheckFailedException")
            this.writeUnits++;
          throw error;
        }
      },
      { step: "initialize", name: "benchCapacityMeter" },
    );
  }
  snapshot(): DynamoDbUse {
    return { reads: this.reads, writes: this.writes, readUnits: this.readUnits, writeUnits: this.writeUnits };
  }
  #add(read: boolean, capacity: Capacity): void {
    const units = [capacity ?? []].flat().reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0);
    if (read) this.readUnits += units;
    else this.writeUnits += units;
  }
}

/** Copies what `replicator` finds until caught up: the records copied; throws if it did not complete. */
async function copyUntilCaughtUp(replicator: Replicator): Promise<number> {
  const summary = await replicator.worker.replicate(Date.now() + 3_600_000, { stopWhenCaughtUp: true });
  if (!summary.caughtUp || summary.errors.length > 0) {
    throw new Error(
      `warm-up copy ended ${summary.endReason}, caught up ${summary.caughtUp}, errors ${summary.errors.length}`,
    );
  }
  return summary.partitions.reduce((sum, p) => sum + p.records, 0);
}

/** WorkerJob.warmupTopic copied by a replicator of its own: the records copied. */
async function warmUpAlone(
  config: ReturnType<typeof parseConfig>,
  backend: Awaited<ReturnType<typeof leaseStoreFor>>["backend"],
): Promise<number> {
  const replicator = createReplicator(config, {
    ...backend,
    logger: new StderrLogger(),
    metrics: new CountingMetrics(),
  });
  try {
    return await copyUntilCaughtUp(replicator);
  } finally {
    await replicator.close();
  }
}

/** Resolves at GO_LINE on stdin; rejects if stdin closes first. */
function goAhead(): Promise<void> {
  return new Promise((resolve, reject) => {
    let text = "";
    const onData = (chunk: Buffer) => {
      text += chunk.toString("utf8");
      if (!text.split("\n").includes(GO_LINE)) return;
      settle();
      resolve();
    };
    const onEnd = () => {
      settle();
      reject(new Error(`stdin closed before the bench's "${GO_LINE}"`));
    };
    const settle = () => {
      process.stdin.off("data", onData).off("end", onEnd).pause();
    };
    process.stdin.on("data", onData).on("end", onEnd).resume();
  });
}

async function main(): Promise<void> {
  const job = JSON.parse(process.env.BENCH_WORKER ?? "null") as WorkerJob | null;
  if (job === null) throw new Error("BENCH_WORKER is not set");
  const configFor = (topic: string) =>
    parseConfig({
      source: { brokers: [...job.sourceBrokers], clientId: "bench-mirror" },
      target: {
        brokers: [...job.targetBrokers],
        clientId: "bench-mirror",
        copy: job.copy ?? "records",
        compression: job.compression ?? "none",
      },
      topics: { whitelist: topic },
    });
  const shared = job.warmupTopic !== undefined && job.warmupShared === true;
  // Bench topic names hold no regex metacharacters but the hyphen, which is none outside [].
  const config = configFor(shared ? `${job.topic}|${job.warmupTopic}` : job.topic);
  const table = await leaseStoreFor(config, "embedded", { stateDir: job.stateDir });
  const aloneRecords =
    job.warmupTopic === undefined || shared
      ? 0
      : await warmUpAlone(configFor(job.warmupTopic), table.backend);
  // The embedded store is reached through a DynamoDB client, as DynamoDB is.
  const dynamodb = table.backend.dynamodb;
  if (dynamodb === undefined) throw new Error("the embedded lease store has no DynamoDB client to meter");
  const meter = new CapacityMeter();
  meter.attach(dynamodb);
  // BENCH_LEASE_TRACE=<file> appends the duration of every lease-store call: checkpoints sit on
  // the pump's path between two writes, so their latency is part of the copy rate.
  if (process.env.BENCH_LEASE_TRACE) {
    const { appendFileSync } = await import("node:fs");
    dynamodb.middlewareStack.add(
      (next, context) => async (args) => {
        const t0 = performance.now();
        try {
          return await next(args);
        } finally {
          appendFileSync(
            process.env.BENCH_LEASE_TRACE as string,
            `TRACE ddb-${context.commandName} p ${(performance.now() - t0).toFixed(1)}\n`,
          );
        }
      },
      { step: "initialize" },
    );
  }
  const metrics = new CountingMetrics();
  const replicator = createReplicator(config, {
    ...table.backend,
    logger: new StderrLogger(),
    metrics,
  });
  const stop = new AbortController();
  if (job.mode === "continuous") {
    process.stdin.on("end", () => stop.abort());
    process.stdin.on("close", () => stop.abort());
    process.stdin.resume();
  }
  try {
    let warmupRecords = aloneRecords;
    if (shared) {
      warmupRecords = await copyUntilCaughtUp(replicator);
      metrics.reset();
      process.stdout.write(`${WARM_LINE} ${warmupRecords}\n`);
      await goAhead();
    }
    const pool = {
      reused: answerPool.reused,
      allocated: answerPool.allocated,
      returned: answerPool.returned,
    };
    const dynamodbBefore = meter.snapshot();
    const cpu = process.cpuUsage();
    const started = performance.now();
    const summary = await replicator.worker.replicate(Date.now() + 3_600_000, {
      stopWhenCaughtUp: job.mode === "once",
      signal: stop.signal,
    });
    const elapsedMs = performance.now() - started;
    const used = process.cpuUsage(cpu);
    const dynamodbAfter = meter.snapshot();
    const report: WorkerReport = {
      endReason: summary.endReason,
      caughtUp: summary.caughtUp,
      records: summary.partitions.reduce((sum, p) => sum + p.records, 0),
      bytes: summary.partitions.reduce((sum, p) => sum + p.bytes, 0),
      batches: metrics.batches,
      errors: metrics.errors + summary.errors.length,
      elapsedMs,
      startupMs: metrics.firstBatchAt - started,
      lastBatchMs: metrics.lastBatchAt - started,
      cpuMs: (used.user + used.system) / 1000,
      secondHalf: metrics.secondHalf(),
      maxRssMb: process.resourceUsage().maxRSS / 1024,
      warmupRecords,
      answers: {
        reused: answerPool.reused - pool.reused,
        allocated: answerPool.allocated - pool.allocated,
        returned: answerPool.returned - pool.returned,
      },
      dynamodb: {
        reads: dynamodbAfter.reads - dynamodbBefore.reads,
        writes: dynamodbAfter.writes - dynamodbBefore.writes,
        readUnits: dynamodbAfter.readUnits - dynamodbBefore.readUnits,
        writeUnits: dynamodbAfter.writeUnits - dynamodbBefore.writeUnits,
      },
    };
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } finally {
    const slow = setTimeout(
      () => process.stderr.write("[worker warn] closing the replicator takes more than 5 s\n"),
      5_000,
    );
    await replicator.close();
    clearTimeout(slow);
    table.close();
    process.stdin.pause();
  }
}

// The report is out once main() settles. Exit then, as the CLI does, rather than wait for every
// socket and timer of the libraries to wind down: a lingering handle must not hang the bench.
main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench worker failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
