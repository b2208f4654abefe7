/**
 * `kafka-mirror run`: the Lambda's worker, run locally. Any number of these processes may run at
 * once on the same state directory (or DynamoDB table); the leases share the partitions out.
 */

import { partitionKey } from "../../core/model.js";
import type { ReplicationMetrics } from "../../core/ports.js";
import type { RunSummary } from "../../core/worker.js";
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
  const startedAt = Date.now();
  const live = !options.json && isTerminal(io) ? new LiveBlock(io) : null;
  const line = (): string => {
    const s = (Date.now() - startedAt) / 1_000;
    return `${replicator.workerId}: ${count(metrics.records)} records copied in ${s.toFixed(0)} s (${count(Math.round(metrics.records / Math.max(s, 0.001)))} rec/s)`;
  };
  const ticker = setInterval(
    () => (live ? live.draw(line()) : options.json ? undefined : io.stdout.write(`${line()}\n`)),
    live ? 500 : 10_000,
  );
  const summaries: RunSummary[] = [];
  try {
    if (!options.json)
      io.stdout.write(`${replicator.workerId}: mirroring with leases in ${table.location}\n`);
    for (;;) {
      const summary = await replicator.worker.replicate(Date.now() + ROUND_MS, {
        stopWhenCaughtUp: options.once,
        signal: options.signal,
      });
      summaries.push(summary);
      if (summary.endReason === "aborted" || options.signal.aborted) break;
      if (options.once && summary.endReason === "caught-up") break;
    }
  } finally {
    clearInterval(ticker);
    await replicator.close();
    table.close();
  }
  const errors = summaries.flatMap((s) => s.errors);
  const partitions = new Set(summaries.flatMap((s) => s.partitions.map((p) => partitionKey(p.source))));
  if (options.json) {
    io.stdout.write(
      `${JSON.stringify({ workerId: replicator.workerId, records: metrics.records, bytes: metrics.bytes, partitions: partitions.size, errors }, null, 2)}\n`,
    );
  } else {
    live?.draw(line());
    for (const e of errors) {
      io.stdout.write(
        `error ${e.topic}${e.partition === null ? "" : `/${e.partition}`}: ${e.message} [${e.code}]\n`,
      );
    }
    io.stdout.write(
      `${replicator.workerId}: done, ${count(metrics.records)} records from ${partitions.size} partitions` +
        `${errors.length > 0 ? `, ${errors.length} error(s)` : ""}\n`,
    );
  }
  if (options.signal.aborted) return ExitCode.INTERRUPTED;
  return errors.length > 0 || metrics.lost > 0 ? ExitCode.FAILED : ExitCode.OK;
}
