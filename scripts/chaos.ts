/**
 * `npm run chaos`: the exactly-once claim under fire (see scripts/chaos/run.ts). Prints one JSON
 * line with the outcome and exits non-zero when any record was lost, duplicated, reordered or
 * altered, or fewer kills than promised happened. Settings: CHAOS_SEED, CHAOS_FAULT_MS,
 * CHAOS_RECORDS (per partition).
 */
import { type ChaosOptions, DEFAULT_CHAOS, runChaos } from "./chaos/run.js";

const MIN_KILLS = 25;

const options: ChaosOptions = {
  ...DEFAULT_CHAOS,
  ...(process.env.CHAOS_SEED === undefined ? {} : { seed: Number(process.env.CHAOS_SEED) }),
  ...(process.env.CHAOS_FAULT_MS === undefined ? {} : { faultPhaseMs: Number(process.env.CHAOS_FAULT_MS) }),
  ...(process.env.CHAOS_RECORDS === undefined
    ? {}
    : { recordsPerPartition: Number(process.env.CHAOS_RECORDS) }),
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
  result.kills < MIN_KILLS;
console.log(JSON.stringify({ ...result, seconds: Math.round((Date.now() - started) / 1000) }));
process.exit(failed ? 1 : 0);
