/**
 * `kafka-mirror run`: the Lambda's worker, run locally. Any number of these processes may run at
 * once on the same state directory (or DynamoDB table); the leases share the partitions out.
 * With `--lease-store memory` the leases live in this process alone: its rounds hand partitions
 * to each other as usual, but another process would not see them and would copy the same ones.
 */

import type { MirrorConfig } from "../../config/schema.js";
import { partitionKey } from "../../core/model.js";
import type { Logger } from "../../core/ports.js";
import type { RunSummary } from "../../core/run/run-summary.js";
import { describeError } from "../../errors.js";
import { createReplicator, type ReplicatorDependencies } from "../../replicator.js";
import { createLeaseStore, leaseStoreFor } from "../../wiring.js";
import { ExitCode } from "../cli-error.js";
import type { CliLogger } from "../cli-logger.js";
import { type CliCommand, defineCommand } from "../command.js";
import { type CliIo, count } from "../console.js";
import { metricsPortOption, startExporter } from "../run-endpoint.js";
import { RunGroupSync } from "../run-group-sync.js";
import { type Progress, RunTally, startProgress } from "../run-progress.js";
import { claimWorkerIdentity } from "../worker-identity.js";
import { CONFIG_OPTIONS, globalOptions } from "./config-options.js";
import { type GlobalOptions, openClusters } from "./context.js";

export interface RunCommandOptions extends GlobalOptions {
  readonly once: boolean;
  readonly workerId?: string;
  /** `--metrics-port`: serve Prometheus metrics there (0: any free port). */
  readonly metricsPort?: number;
  readonly metricsHost?: string;
}

/**
 * Rounds overlap like the functions' ticks (functions/timing.ts): round k+1 starts
 * ROUND_LEAD_MS before round k drains, so it has announced itself when the handoffs begin, and
 * round k's hard deadline leaves ROUND_HANDOFF_MS for them after its drain starts.
 */
export const ROUND_TIMING = {
  roundMs: 5 * 60_000,
  leadMs: 10_000,
  handoffMs: 60_000,
} as const;

type Replicator = ReturnType<typeof createReplicator>;

export async function runCommand(options: RunCommandOptions, io: CliIo): Promise<number> {
  const clusters = await openClusters(options, io);
  // The worker opens its own connections; these were only the reachability check.
  await clusters.close();
  const { config, logger } = clusters;
  const sayLine = say(options, logger, io);
  // Before the lease store, so a port in use ends the run before anything starts.
  const exporter =
    options.metricsPort === undefined ? null : await startExporter(options.metricsPort, options.metricsHost);
  const table = await leaseStoreFor(config, options.leaseStore, { stateDir: options.stateDir });
  const metrics = new RunTally({ logger, ...(exporter === null ? {} : { forward: exporter.metrics }) });
  const replicator = createReplicator(config, {
    ...table.backend,
    logger,
    metrics,
    security: clusters.security,
    ...(await workerIdentity(options, config, logger)),
  });
  exporter?.countHeld(createLeaseStore(config, table.backend), replicator.workerId);
  const progress = startProgress(replicator.workerId, metrics, { json: options.json, logger }, io);
  let summaries: RunSummary[];
  // groups.whitelist: synced every minute, and at the end of --once (run-group-sync.ts).
  const groupSync = RunGroupSync.open(config, {
    ...options,
    logger,
    security: clusters.security,
    leases: table.store,
    slot: replicator.workerId,
    io,
  });
  try {
    if (!options.json) announce(replicator.workerId, table.location, exporter?.endpoint.url, sayLine, logger);
    summaries = await runRounds(replicator, options);
    if (options.once && !options.signal.aborted) await groupSync?.sync(true);
  } finally {
    progress.stop();
    await groupSync?.close();
    await replicator.close();
    table.close();
    await exporter?.endpoint.close();
  }
  const errors = summaries.flatMap((s) => s.errors);
  reportRun(replicator.workerId, summaries, metrics, options.json, progress, io, sayLine);
  if (options.signal.aborted) return ExitCode.INTERRUPTED;
  // "done, 0 records" would read as a caught-up mirror: with --once, selecting nothing fails.
  const emptySelection = summaries.at(-1)?.emptySelection ?? null;
  if (options.once && emptySelection !== null) {
    io.stderr.write(`kafka-mirror run: nothing to copy: ${emptySelection}\n`);
    return ExitCode.FAILED;
  }
  return errors.length > 0 || metrics.lost > 0 ? ExitCode.FAILED : ExitCode.OK;
}

/**
 * Who this run is: `--worker-id` or `worker.id` as given (the operator keeps them unique), else a
 * slot of the state directory that outlives the process (worker-identity.ts), so a restart takes
 * its dead run's leases back at once (with transactional fencing only). Memory leases die with the
 * process: a fresh id. Without a usable directory for the slot files (a read-only config
 * directory), a fresh id.
 */
async function workerIdentity(
  options: RunCommandOptions,
  config: MirrorConfig,
  logger: Logger,
): Promise<Pick<ReplicatorDependencies, "workerId" | "slot" | "formerSelf">> {
  const given = options.workerId ?? config.worker.id;
  const { fencing } = config.target;
  if (given !== undefined) return { workerId: given };
  if (options.leaseStore === "memory") return {};
  try {
    const { workerId, slot, formerSelf } = await claimWorkerIdentity(
      options.stateDir,
      options.leaseStore === "dynamodb",
    );
    // Taking a dead run's leases before they expire is safe only because the new holder fences
    // its producer before writing; with fencing none a request the dead run left on the wire may
    // still land, and only the lease's expiry keeps it out (target-tail.ts).
    if (fencing !== "transactional") return { workerId, slot };
    return { workerId, slot, formerSelf };
  } catch (error) {
    logger.warn(
      "no worker slot in the state directory; a restart will wait for this run's leases to expire",
      {
        stateDir: options.stateDir,
        ...describeError(error),
      },
    );
    return {};
  }
}

/** Rounds until aborted, or with `--once` until every partition has caught up. */
async function runRounds(replicator: Replicator, options: RunCommandOptions): Promise<RunSummary[]> {
  if (options.once) return onceRounds(replicator, options);
  return overlappingRounds(replicator, options.signal, ROUND_TIMING);
}

async function onceRounds(replicator: Replicator, options: RunCommandOptions): Promise<RunSummary[]> {
  const summaries: RunSummary[] = [];
  for (;;) {
    const summary = await replicator.worker.replicate(Date.now() + ROUND_TIMING.roundMs, {
      stopWhenCaughtUp: true,
      signal: options.signal,
    });
    summaries.push(summary);
    if (summary.endReason === "aborted" || options.signal.aborted) return summaries;
    if (summary.endReason === "caught-up") return summaries;
  }
}

/**
 * Overlapping rounds until aborted: every round is a worker of its own (worker id
 * `<id>.<round>`) in the slot `<id>`, draining at its end into the next round, which takes the
 * partitions over by handoff; no round starts from nothing and no partition waits at a round's
 * end. A round's topic plan is made when it starts, so new topics are picked up each round.
 */
export async function overlappingRounds(
  replicator: Pick<Replicator, "workerId" | "workerFor"> & { readonly slot?: string },
  signal: AbortSignal,
  timing: { readonly roundMs: number; readonly leadMs: number; readonly handoffMs: number },
): Promise<RunSummary[]> {
  const slot = replicator.slot ?? replicator.workerId;
  const summaries: RunSummary[] = [];
  const running = new Set<Promise<void>>();
  for (let round = 1; !signal.aborted; round++) {
    const drainAt = Date.now() + timing.roundMs;
    const worker = replicator.workerFor({ workerId: `${replicator.workerId}.${round}`, slot });
    const run: Promise<void> = worker
      .replicate(drainAt + timing.handoffMs, { drainAt, signal })
      .then((summary) => {
        summaries.push(summary);
      })
      .finally(() => running.delete(run));
    running.add(run);
    // The next round starts shortly before this one drains, or at once if it ended early.
    await Promise.race([run, sleepUntil(drainAt - timing.leadMs, signal)]);
  }
  await Promise.all([...running]);
  return summaries;
}

function sleepUntil(at: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, at - Date.now()));
    signal.addEventListener("abort", done, { once: true });
  });
}

/**
 * How run's own lines are written: plain on stdout, or with --log-format json as log lines like
 * every other, so a log shipper reading the output sees JSON only.
 */
function say(options: RunCommandOptions, logger: CliLogger, io: CliIo): Say {
  if (options.logFormat === "json") return (line, fields) => logger.notice(line, fields);
  return (line) => void io.stdout.write(`${line}\n`);
}

type Say = (line: string, fields: Record<string, unknown>) => void;

/** Where the leases are and, with --metrics-port, where to scrape. */
function announce(
  workerId: string,
  leases: string,
  metricsUrl: string | undefined,
  sayLine: Say,
  logger: CliLogger,
) {
  sayLine(`${workerId}: mirroring with leases in ${leases}`, { workerId, leases });
  if (metricsUrl !== undefined) logger.notice(`${workerId}: metrics at ${metricsUrl}`, { url: metricsUrl });
}

function reportRun(
  workerId: string,
  summaries: readonly RunSummary[],
  metrics: RunTally,
  json: boolean,
  progress: Progress,
  io: CliIo,
  sayLine: Say,
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
    sayLine(`error ${e.topic}${e.partition === null ? "" : `/${e.partition}`}: ${e.message} [${e.code}]`, {
      ...e,
    });
  }
  sayLine(
    `${workerId}: done, ${count(metrics.records)} records from ${partitions.size} partitions` +
      `${errors.length > 0 ? `, ${errors.length} error(s)` : ""}`,
    { workerId, records: metrics.records, partitions: partitions.size, errors: errors.length },
  );
}

export const RUN_COMMAND: CliCommand = defineCommand({
  name: "run",
  summary: "mirror with the Lambda's worker code, in this process",
  options: {
    ...CONFIG_OPTIONS,
    once: { type: "boolean", help: "stop when every partition has caught up (else run until Ctrl-C)" },
    "worker-id": {
      type: "string",
      arg: "ID",
      help: "this worker's name in the lease table",
      default: "worker.id, else <hostname>-w<n>~<random>: slot n of the state directory",
    },
    "metrics-port": {
      type: "string",
      arg: "PORT",
      help: "serve Prometheus metrics at http://HOST:PORT/metrics (0: any free port, printed at start)",
    },
    "metrics-host": {
      type: "string",
      arg: "HOST",
      help: "the address --metrics-port listens on",
      default: "127.0.0.1",
    },
  },
  example: "kafka-mirror run --config mirror.yaml --once",
  run: (values, io, signal) => {
    const workerId = values["worker-id"];
    const options = globalOptions(RUN_COMMAND, values, signal);
    const metricsPort = metricsPortOption(values["metrics-port"]);
    const metricsHost = values["metrics-host"];
    return runCommand(
      {
        ...options,
        once: values.once ?? false,
        ...(workerId ? { workerId } : {}),
        ...(metricsPort === undefined ? {} : { metricsPort }),
        ...(metricsHost === undefined ? {} : { metricsHost }),
      },
      io,
    );
  },
});
