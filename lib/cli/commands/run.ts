/**
 * `kafka-mirror run`: the Lambda's worker, run locally. Any number of these processes may run at
 * once on the same state directory (or DynamoDB table); the leases share the partitions out.
 */

import { partitionKey } from "../../core/model.js";
import type { ReplicationMetrics } from "../../core/ports.js";
import type { RunSummary } from "../../core/run-summary.js";
import { createReplicator } from "../../replicator.js";
import { ExitCode } from "../cli-error.js";
import { type CliIo, count, isTerminal, LiveBlock } from "../console.js";
import { openLeaseTable } from "../leases.js";
import { type GlobalOptions, openClusters } from "./context.js";

export interface RunCommandOptions extends GlobalOptions {
  readonly once: boolean;
  readonly workerId?: string;
}

/** A round ends, releases and re-balances leases; long enough that this costs nothing. */
const ROUND_MS = 5 * 60_000;

class CountingMetrics implements ReplicationMetrics {
  records = 0;
  bytes = 0;
  errors = 0;
  lost = 0;
  batchCopied(event: { records: number; bytes: number }): void {
    this.records += event.records;
    this.bytes += event.bytes;
  }
  recordsLost(): void {
    this.lost++;
  }
  partitionError(): void {
    this.errors++;
  }
}

type Replicator = ReturnType<typeof createReplicator>;

export async function runCommand(options: RunCommandOptions, io: CliIo): Promise<number> {
  const clusters = await openClusters(options, io);
  // The worker opens its own connections; these were only the reachability check.
  await clusters.close();
  const { config, logger } = clusters;
  const table = await openLeaseTable(config, options.stateDir, options.leaseStore);
  const metrics = new CountingMetrics();
  const replicator = createReplicator(config, {
    dynamodb: table.client,
    logger,
    metrics,
    security: clusters.security,
    ...(options.workerId === undefined ? {} : { workerId: options.workerId }),
  });
  const progress = startProgress(replicator.workerId, metrics, options.json, io);
  let summaries: RunSummary[];
  try {
    if (!options.json)
      io.stdout.write(`${replicator.workerId}: mirroring with leases in ${table.location}\n`);
    summaries = await runRounds(replicator, options);
  } finally {
    progress.stop();
    await replicator.close();
    table.close();
  }
  const errors = summaries.flatMap((s) => s.errors);
  reportRun(replicator.workerId, summaries, metrics, options.json, progress, io);
  if (options.signal.aborted) return ExitCode.INTERRUPTED;
  return errors.length > 0 || metrics.lost > 0 ? ExitCode.FAILED : ExitCode.OK;
}

/** Rounds until aborted, or with `--once` until every partition has caught up. */
async function runRounds(replicator: Replicator, options: RunCommandOptions): Promise<RunSummary[]> {
  const summaries: RunSummary[] = [];
  for (;;) {
    const summary = await replicator.worker.replicate(Date.now() + ROUND_MS, {
      stopWhenCaughtUp: options.once,
      signal: options.signal,
    });
    summaries.push(summary);
    if (summary.endReason === "aborted" || options.signal.aborted) return summaries;
    if (options.once && summary.endReason === "caught-up") return summaries;
  }
}

interface Progress {
  readonly line: () => string;
  readonly live: LiveBlock | null;
  stop(): void;
}

/** A live line on a terminal, a line every 10 s otherwise, nothing with --json. */
function startProgress(workerId: string, metrics: CountingMetrics, json: boolean, io: CliIo): Progress {
  const startedAt = Date.now();
  const live = !json && isTerminal(io) ? new LiveBlock(io) : null;
  const line = (): string => {
    const s = (Date.now() - startedAt) / 1_000;
    return `${workerId}: ${count(metrics.records)} records copied in ${s.toFixed(0)} s (${count(Math.round(metrics.records / Math.max(s, 0.001)))} rec/s)`;
  };
  const ticker = setInterval(
    () => (live ? live.draw(line()) : json ? undefined : io.stdout.write(`${line()}\n`)),
    live ? 500 : 10_000,
  );
  return { line, live, stop: () => clearInterval(ticker) };
}

function reportRun(
  workerId: string,
  summaries: readonly RunSummary[],
  metrics: CountingMetrics,
  json: boolean,
  progress: Progress,
  io: CliIo,
): void {
  const errors = summaries.flatMap((s) => s.errors);
  const partitions = new Set(summaries.flatMap((s) => s.partitions.map((p) => partitionKey(p.source))));
  if (json) {
    io.stdout.write(
      `${JSON.stringify({ workerId, records: metrics.records, bytes: metrics.bytes, partitions: partitions.size, errors }, null, 2)}\n`,
    );
    return;
  }
  progress.live?.draw(progress.line());
  for (const e of errors) {
    io.stdout.write(
      `error ${e.topic}${e.partition === null ? "" : `/${e.partition}`}: ${e.message} [${e.code}]\n`,
    );
  }
  io.stdout.write(
    `${workerId}: done, ${count(metrics.records)} records from ${partitions.size} partitions` +
      `${errors.length > 0 ? `, ${errors.length} error(s)` : ""}\n`,
  );
}
