/**
 * Scheduled replication: each invocation runs one worker until shortly before Lambda's timeout.
 * The stack starts `Workers` invocations per tick, one per slot; leases in DynamoDB share the
 * partitions out. Runs of a slot overlap: a run drains (hands its partitions to the next tick's
 * run of its slot) shortly after that run started, see timing.ts.
 */
import type { Context } from "aws-lambda";
import type { RunSummary } from "../lib/core/run/run-summary.js";
import type { ReplicateOptions } from "../lib/core/run/worker.js";
import { ReplicatorError } from "../lib/errors.js";
import { createReplicator, type Replicator } from "../lib/replicator.js";
import { scheduledFunction, TICK_SECONDS_VARIABLE } from "./runtime.js";
import { drainAtFor, RUN_SAFETY_MARGIN_MS, type ScheduleInput, scheduleInput } from "./timing.js";

export { RUN_SAFETY_MARGIN_MS } from "./timing.js";

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
  workerFor(identity: { readonly workerId: string; readonly slot: string }): {
    replicate(deadline: number, options?: ReplicateOptions): Promise<RunSummary>;
  };
}

/** Which tick and slot a run belongs to (the rule's event) and the tick's length (the stack's). */
export interface RunSchedule extends ScheduleInput {
  /** The replication tick in ms; null (no drain) when the function was not told. */
  readonly tickMs: number | null;
}

const UNSCHEDULED: RunSchedule = { slot: null, scheduledAt: null, tickMs: null };
/** Runs of this container so far: each run gets a worker id of its own. */
let runs = 0;

/**
 * One run until the deadline left by `context`, read afresh on each call: the call RefreshOnAuthFailure
 * repeats after a reconnect gets only what the first one left. The run drains from
 * `drainAtFor(scheduled start, tick)` on, when the schedule says both.
 */
export async function replicate(
  replicator: ReplicationRunner,
  context: Context,
  schedule: RunSchedule = UNSCHEDULED,
): Promise<ReplicateResult> {
  const startedAt = Date.now();
  const deadline = startedAt + context.getRemainingTimeInMillis() - RUN_SAFETY_MARGIN_MS;
  // A repeat after a full run has no time left: the rebuilt clients are for the next invocation.
  if (deadline <= Date.now()) {
    return { workerId: replicator.workerId, endReason: "deadline", partitions: 0, records: 0, errors: 0 };
  }
  // A manual invoke names no slot: a slot of its own, which no later run takes over from.
  const slot = schedule.slot === null ? `manual-${replicator.workerId}` : `slot-${schedule.slot}`;
  runs += 1;
  const worker = replicator.workerFor({ workerId: `${replicator.workerId}.${runs}`, slot });
  const drainAt =
    schedule.tickMs === null ? undefined : drainAtFor(schedule.scheduledAt ?? startedAt, schedule.tickMs);
  const summary = await worker.replicate(deadline, drainAt === undefined ? {} : { drainAt });
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
  "replicate",
  (runtime, security, { logger, metrics }) =>
    createReplicator(runtime.config, { dynamodb: runtime.dynamodb, logger, metrics, security }),
  (replicator, context, _parts, event) =>
    replicate(replicator, context, { ...scheduleInput(event), tickMs: tickMs(process.env) }),
);

/** The tick the stack configured (seconds); null without it, and then runs do not drain. */
export function tickMs(env: NodeJS.ProcessEnv): number | null {
  const seconds = Number(env[TICK_SECONDS_VARIABLE] ?? "");
  return Number.isInteger(seconds) && seconds > 0 ? seconds * 1_000 : null;
}
