/**
 * A worker's settings: their types, defaults and checks. Checked once, when a Worker is built,
 * so a run never starts with settings it cannot keep its promises under.
 */
import { ReplicatorError } from "../../errors.js";
import type { CopyMode, FetchLimits, StartFrom } from "../model.js";
import type { ConfigSyncPolicy } from "../plan/config-sync.js";
import type { ClusterAdmin, SourceReader } from "../ports.js";
import type { ProvenanceSettings } from "../provenance.js";
import type { PumpDeps, PumpSettings } from "../pump/partition-pump.js";
import type { ReadAheadBudget } from "../pump/read-ahead.js";

export interface WorkerSettings {
  readonly batch: FetchLimits;
  readonly leases: {
    /** How long a claim or renewal holds a lease (always capped at the run's deadline). */
    readonly durationMs: number;
    readonly renewIntervalMs: number;
    /** How often the worker looks for leases to take. */
    readonly rebalanceIntervalMs: number;
    /** At most one routine checkpoint per partition per this many ms (PumpSettings). @default 0 */
    readonly checkpointIntervalMs?: number;
    /**
     * Leases a worker tries to take per round, and assignments the leader changes per round.
     * @default 1000 (DEFAULT_MAX_CLAIMS_PER_ROUND)
     */
    readonly maxClaimsPerRound?: number;
  };
  readonly startFrom: StartFrom;
  /** Replication factor of target topics the worker creates. */
  readonly replicationFactor: number;
  /** At least the target writer's request timeout; see PumpSettings.writeSafetyMarginMs. */
  readonly writeSafetyMarginMs: number;
  /** PumpSettings.writeMaxBytes. @default 0 (one fetch per write) */
  readonly writeMaxBytes?: number;
  /** Exactly-once mode (needs WorkerOptions.targetReader); null or absent: at-least-once. */
  readonly provenance?: ProvenanceSettings | null;
  /** target.copy (PumpSettings.copy; "batches" needs WorkerOptions.targetReader). @default "records" */
  readonly copy?: CopyMode;
  /**
   * Bytes of fetched records all pumps of a run may hold, together, beyond the batch each is
   * writing (see ReadAhead). @default 64 MiB
   */
  readonly readAheadBytes?: number;
  /** How often a run re-plans topics (new topics, partitions, configs). @default 10 s */
  readonly discoveryIntervalMs?: number;
  /** Which topic configs the target gets. @default DEFAULT_CONFIG_SYNC */
  readonly configSync?: ConfigSyncPolicy;
}

export const DEFAULT_DISCOVERY_INTERVAL_MS = 10_000;

export const DEFAULT_READ_AHEAD_BYTES = 64 * 1024 * 1024;

/**
 * THE lease-duration rule (the config schema checks it too, through this function): a renewal
 * must land while the lease still has more than the write safety margin left, or pumps pause
 * before every renewal, and with no room at all a worker could never start a write.
 */
export function writeFitsInLease(
  leases: { readonly durationMs: number; readonly renewIntervalMs: number },
  writeSafetyMarginMs: number,
): boolean {
  // Written as a negation so that a NaN is left to the checks of each field.
  return !(leases.renewIntervalMs + writeSafetyMarginMs >= leases.durationMs);
}

/** Problems with the settings, all at once; empty when they are usable. */
export function checkWorkerSettings(settings: WorkerSettings): string[] {
  const problems: string[] = [];
  const { batch, leases, writeSafetyMarginMs, replicationFactor } = settings;
  const positive = {
    "batch.maxRecords": batch.maxRecords,
    "batch.maxBytes": batch.maxBytes,
    "leases.durationMs": leases.durationMs,
    "leases.renewIntervalMs": leases.renewIntervalMs,
    "leases.rebalanceIntervalMs": leases.rebalanceIntervalMs,
    writeSafetyMarginMs,
  };
  for (const [path, value] of Object.entries(positive)) {
    if (!(value > 0)) problems.push(`${path} must be > 0`);
  }
  const claims = leases.maxClaimsPerRound;
  if (claims !== undefined && !(Number.isSafeInteger(claims) && claims >= 1))
    problems.push("leases.maxClaimsPerRound must be an integer >= 1");
  if (!(batch.maxWaitMs >= 0)) problems.push("batch.maxWaitMs must be >= 0");
  const interval = leases.checkpointIntervalMs ?? 0;
  // Progress must reach the store well inside a lease, or a successor repeats (at-least-once)
  // or reads back (exactly-once) more than a lease's worth of data.
  if (!(interval >= 0 && interval < leases.durationMs))
    problems.push("leases.checkpointIntervalMs must be >= 0 and < leases.durationMs");
  const readAhead = settings.readAheadBytes ?? DEFAULT_READ_AHEAD_BYTES;
  if (!Number.isSafeInteger(readAhead) || readAhead < 0)
    problems.push("readAheadBytes must be an integer >= 0");
  if (!Number.isInteger(replicationFactor) || (replicationFactor < 1 && replicationFactor !== -1)) {
    problems.push("replicationFactor must be a positive integer or -1 (broker default)");
  }
  if (!writeFitsInLease(leases, writeSafetyMarginMs)) {
    problems.push("leases.renewIntervalMs + writeSafetyMarginMs must be < leases.durationMs");
  }
  return problems;
}

/** Throws CONFIG_INVALID listing every problem with settings a Worker cannot run with. */
export function assertWorkerSettings(
  settings: WorkerSettings,
  wiring: { readonly hasTargetReader: boolean },
): void {
  const problems = checkWorkerSettings(settings);
  if (problems.length > 0) {
    throw new ReplicatorError("CONFIG_INVALID", `invalid worker settings: ${problems.join("; ")}`, {
      details: { problems },
    });
  }
  if (((settings.provenance ?? null) !== null || settings.copy === "batches") && !wiring.hasTargetReader) {
    throw new ReplicatorError("CONFIG_INVALID", "provenance needs a targetReader to read the target's tail", {
      details: { problems: ["targetReader is required with provenance"] },
    });
  }
}

/** What each of a run's pumps is given of the worker's settings. */
export function pumpSettings(settings: WorkerSettings): PumpSettings {
  return {
    batch: settings.batch,
    startFrom: settings.startFrom,
    writeSafetyMarginMs: settings.writeSafetyMarginMs,
    writeMaxBytes: settings.writeMaxBytes ?? 0,
    provenance: settings.provenance ?? null,
    copy: settings.copy ?? "records",
    checkpointIntervalMs: settings.leases.checkpointIntervalMs ?? 0,
  };
}

/** The worker's ports a pump uses (WorkerOptions has them): PumpDeps's, and the target's. */
export type PumpPorts = Pick<
  PumpDeps,
  "source" | "target" | "sourceAdmin" | "clock" | "logger" | "metrics"
> & {
  readonly targetAdmin: ClusterAdmin;
  /** Reads the TARGET cluster's partitions back; required when settings.provenance is set. */
  readonly targetReader?: SourceReader;
  readonly leases: PumpDeps["store"];
};

/** A pump's dependencies: the worker's ports, and the run's shared read-ahead budget. */
export function pumpDeps(o: PumpPorts, readAheadBudget: ReadAheadBudget): PumpDeps {
  const { source, target, sourceAdmin, targetAdmin, targetReader, clock, logger, metrics } = o;
  return {
    source,
    target,
    sourceAdmin,
    store: o.leases,
    clock,
    logger,
    metrics,
    ...(targetReader === undefined
      ? {}
      : { targetTail: { reader: targetReader, admin: targetAdmin, logger, metrics } }),
    readAheadBudget,
  };
}
