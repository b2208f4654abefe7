/**
 * `npm run chaos`: the exactly-once claim under fire (see scripts/chaos/run.ts). Prints one JSON
 * line with the outcome and exits non-zero when any record was lost, duplicated, reordered or
 * altered, or fewer faults than promised happened. Settings (environment): CHAOS_SEED,
 * CHAOS_FAULT_MS, CHAOS_RECORDS (per partition), CHAOS_STORE_DELAYS (latency bursts per run),
 * CHAOS_FREEZES (worker freezes per run, SIGSTOP then SIGCONT, some past the lease; default 12),
 * CHAOS_LEADER_MOVES (clean leader changes of source partitions per run; default 14),
 * CHAOS_TARGET_ISOLATION (read_committed, the default, or read_uncommitted: how the comparison
 * reads the target) and CHAOS_FENCING (the workers' target.fencing: transactional, the default,
 * or none, the old idempotent mode, which cannot fence a frozen worker); KAFKA_TESTBED=real runs
 * it against real Kafka (no broker faults there); CHAOS_KEEP_LOGS=1 keeps
 * the run's worker and driver logs (kept anyway when something was wrong; the path is printed).
 */
import { ReplicatorError } from "../lib/errors.js";
import type { SourceIsolationLevel } from "../lib/kafka/read/source-reader.js";
import { KAFKA_TESTBED } from "../test/helpers/kafka-testbed.js";
import { type ChaosOptions, DEFAULT_CHAOS, FENCING_MODES, runChaos } from "./chaos/run.js";

const MIN_KILLS = 25;
const MIN_STORE_DELAYS = 10;
const MIN_FREEZES = 10;
const MIN_LEADER_MOVES = 10;
const ISOLATION_LEVELS: readonly SourceIsolationLevel[] = ["read_committed", "read_uncommitted"];

/** A whole number >= 0 from the environment, or `fallback` when unset. */
function count(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new ReplicatorError(
      "CONFIG_INVALID",
      `${name} must be a whole number >= 0, got ${JSON.stringify(raw)}`,
      {
        details: { name, input: raw },
      },
    );
  }
  return n;
}

/** One of `allowed` from the environment, or `fallback` when unset. */
function oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = allowed.find((a) => a === raw);
  if (value === undefined) {
    throw new ReplicatorError(
      "CONFIG_INVALID",
      `${name} must be one of ${allowed.join(", ")}, got ${JSON.stringify(raw)}`,
      { details: { name, input: raw, allowed } },
    );
  }
  return value;
}

const options: ChaosOptions = {
  ...DEFAULT_CHAOS,
  // Real Kafka gets no broker faults (scripts/chaos/run.ts): three brokers where leaders move,
  // one for the target.
  brokers: KAFKA_TESTBED === "real" ? { source: 3, target: 1 } : DEFAULT_CHAOS.brokers,
  seed: count("CHAOS_SEED", DEFAULT_CHAOS.seed),
  faultPhaseMs: count("CHAOS_FAULT_MS", DEFAULT_CHAOS.faultPhaseMs),
  recordsPerPartition: count("CHAOS_RECORDS", DEFAULT_CHAOS.recordsPerPartition),
  storeDelays: {
    ...DEFAULT_CHAOS.storeDelays,
    count: count("CHAOS_STORE_DELAYS", DEFAULT_CHAOS.storeDelays.count),
  },
  freezes: { ...DEFAULT_CHAOS.freezes, count: count("CHAOS_FREEZES", DEFAULT_CHAOS.freezes.count) },
  leaderMoves: count("CHAOS_LEADER_MOVES", DEFAULT_CHAOS.leaderMoves),
  targetIsolation: oneOf("CHAOS_TARGET_ISOLATION", ISOLATION_LEVELS, DEFAULT_CHAOS.targetIsolation),
  fencing: oneOf("CHAOS_FENCING", FENCING_MODES, DEFAULT_CHAOS.fencing),
  keepLogs: process.env.CHAOS_KEEP_LOGS === "1",
  log: (line) => console.error(`[chaos] ${line}`),
};

const started = Date.now();
const result = await runChaos(options);
const failed =
  result.lost > 0 ||
  result.duplicated > 0 ||
  result.out_of_order > 0 ||
  result.altered > 0 ||
  result.extra > 0 ||
  result.kills < MIN_KILLS ||
  result.store_delays < Math.min(MIN_STORE_DELAYS, options.storeDelays.count) ||
  result.freezes < Math.min(MIN_FREEZES, options.freezes.count) ||
  result.leader_moves < Math.min(MIN_LEADER_MOVES, options.leaderMoves);
console.log(JSON.stringify({ ...result, seconds: Math.round((Date.now() - started) / 1000) }));
process.exit(failed ? 1 : 0);
