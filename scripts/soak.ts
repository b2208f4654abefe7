/**
 * `npm run soak`: the replicator under steady traffic for minutes, in two modes: the `replicate`
 * bundle under a simulated schedule (Lambda mode) and one long-running CLI `run` (CLI mode).
 * Prints per mode latency (source timestamp to target arrival), how long partitions had no
 * holder, handoffs and DynamoDB calls per minute, verifies the copy, and ends with one JSON line
 * per mode. Options: --mode lambda|cli|both, --ticks N (5: 4 tick boundaries), --tick-seconds S
 * (60), --slots N (3), --cli-seconds S (360), --rate R (300 records/s), --topics N (3),
 * --partitions N (4), --sparse-seconds S (10: one more topic whose partitions get a record each
 * every S seconds, its latency reported apart; 0: none), --max-wait-ms N (100: the workers'
 * batch.maxWaitMs, below the product's 500 as in every soak before; 500 measures the default).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { runCliMode } from "./soak/cli-mode.js";
import { runLambdaMode, synthesize } from "./soak/lambda-mode.js";
import { type ModeResult, SoakRig } from "./soak/rig.js";

const { values } = parseArgs({
  options: {
    mode: { type: "string", default: "both" },
    ticks: { type: "string", default: "5" },
    "tick-seconds": { type: "string", default: "60" },
    slots: { type: "string", default: "3" },
    "cli-seconds": { type: "string", default: "360" },
    rate: { type: "string", default: "300" },
    topics: { type: "string", default: "3" },
    partitions: { type: "string", default: "4" },
    "sparse-seconds": { type: "string", default: "10" },
    "max-wait-ms": { type: "string", default: "100" },
  },
});
const number = (name: keyof typeof values): number => {
  const n = Number(values[name]);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`--${name} must be a whole number >= 1, got ${values[name]}`);
  return n;
};
const mode = String(values.mode);
if (!["lambda", "cli", "both"].includes(mode))
  throw new Error(`--mode must be lambda, cli or both, got ${mode}`);
const tickSeconds = number("tick-seconds");
if (tickSeconds % 60 !== 0) throw new Error("--tick-seconds must be whole minutes (the stack's ticks are)");
const log = (line: string) =>
  process.stderr.write(`[soak ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
const sparseSeconds = Number(values["sparse-seconds"]);
if (!Number.isInteger(sparseSeconds) || sparseSeconds < 0)
  throw new Error(`--sparse-seconds must be a whole number >= 0, got ${values["sparse-seconds"]}`);
const traffic = {
  topics: number("topics"),
  partitions: number("partitions"),
  rate: number("rate"),
  sparseSeconds,
  maxWaitMs: number("max-wait-ms"),
};
const results: ModeResult[] = [];
const dir = await mkdtemp(join(tmpdir(), "kafka-mirror-soak-"));

try {
  if (mode !== "cli") {
    log("cdk synth for the replicate bundle");
    const bundles = await synthesize();
    const rig = new SoakRig(traffic, "SOAK-LAMBDA");
    try {
      await rig.start();
      const options = { ticks: number("ticks"), tickSeconds, slots: number("slots") };
      results.push(await rig.measure("lambda", (t) => runLambdaMode(rig, bundles, options, t, log), log));
    } finally {
      await rig.stop();
      bundles.remove();
    }
  }
  if (mode !== "lambda") {
    const rig = new SoakRig(traffic, "SOAK-CLI");
    try {
      await rig.start();
      results.push(await rig.measure("cli", (t) => runCliMode(rig, dir, number("cli-seconds"), t, log), log));
    } finally {
      await rig.stop();
    }
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
for (const r of results) {
  if (r.sparse !== null) {
    log(
      `${r.mode}: sparse topic (a record per partition every ${r.sparse.every_s} s): p50 ${r.sparse.p50_ms} ms, p99 ${r.sparse.p99_ms} ms, max ${r.sparse.max_ms} ms over ${r.sparse.records} records`,
    );
  }
  log(
    `${r.mode}: p50 ${r.p50_ms} ms, p99 ${r.p99_ms} ms, max ${r.max_ms} ms; longest with nobody copying ${r.max_no_copy_ms} ms; holderless max ${(r.holderless_fraction_max * 100).toFixed(2)}% of the time, longest ${r.max_holderless_ms} ms; ${r.handoffs} handoffs; ${r.dynamodb_calls_per_min} DynamoDB calls/min; ${r.verified ? "copy verified" : `COPY NOT VERIFIED: ${r.mismatches.slice(0, 3).join("; ")}`}`,
  );
}
for (const r of results) process.stdout.write(`${JSON.stringify(r)}\n`);
process.exit(results.every((r) => r.verified) ? 0 : 1);
