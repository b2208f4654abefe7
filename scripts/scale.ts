/**
 * npm run scale: the real lease protocol (LeaseCoordinator, the leader's assignment, the one
 * LeaseStore over the in-memory table, which applies DynamoDB's conditions) at fleet size, on
 * virtual time: 100 simulated workers over 5,000 partitions start, 10 die, 10 join, 10 leave
 * gracefully.
 * Prints time to balanced after each, read and write units per second in steady state and while
 * settling, and dollars per month at on-demand prices; then the same steady state at 1,000
 * partitions; ends with one JSON line. SCALE_PARTITIONS, SCALE_WORKERS, SCALE_BUSY (partitions
 * checkpointing once a second; default all) vary it.
 */

import type { Units } from "./scale/counting-store.js";
import { Fleet } from "./scale/fleet.js";
import type { SimSettings } from "./scale/sim-worker.js";

/** On-demand, us-east-1, per million request units (AWS price list as of 2024-11-01, still current 2026-12-01 per the brief). */
const PRICE_READ = 0.125 / 1e6;
const PRICE_WRITE = 0.625 / 1e6;
const SECONDS_PER_MONTH = 30 * 24 * 3600;

const SETTINGS: SimSettings = {
  durationMs: 10_000,
  renewIntervalMs: 3_000,
  rebalanceIntervalMs: 5_000,
  maxClaimsPerRound: 1_000,
};

const PARTITIONS = Number(process.env.SCALE_PARTITIONS ?? 5_000);
const WORKERS = Number(process.env.SCALE_WORKERS ?? 100);
const BUSY = Number(process.env.SCALE_BUSY ?? PARTITIONS);

function dollarsPerMonth(u: Units, checkpointsPerSecond = 0): number {
  return (u.reads * PRICE_READ + (u.writes + checkpointsPerSecond) * PRICE_WRITE) * SECONDS_PER_MONTH;
}

const round = (n: number) => Math.round(n * 100) / 100;
const fmt = (u: Units) => ({
  readUnitsPerS: round(u.reads),
  writeUnitsPerS: round(u.writes),
  callsPerS: round(u.calls),
});

async function settle(fleet: Fleet, what: string, limitMs: number) {
  const before = fleet.counting.snapshot();
  const from = fleet.now;
  const ms = await fleet.untilBalanced(limitMs);
  const took = fleet.now - from;
  const u = fleet.counting.snapshot();
  const rate = {
    reads: ((u.reads - before.reads) * 1000) / took,
    writes: ((u.writes - before.writes) * 1000) / took,
    calls: ((u.calls - before.calls) * 1000) / took,
  };
  console.log(
    `${what}: ${ms === null ? `NOT balanced within ${limitMs / 1000} s` : `balanced after ${(ms / 1000).toFixed(2)} s`}; ${JSON.stringify(fmt(rate))}`,
  );
  return { balancedAfterMs: ms, ...fmt(rate) };
}

async function fullRun(partitions: number, workers: number) {
  const fleet = new Fleet(partitions, SETTINGS);
  await fleet.setup();
  fleet.join(workers);
  const start = await settle(fleet, `start (${partitions} partitions, ${workers} workers)`, 120_000);
  await fleet.run(20_000);
  const steady = await fleet.run(60_000);
  console.log(`steady: ${JSON.stringify(fmt(steady))}`);

  const dying = fleet.live().slice(0, 10);
  for (const w of dying) w.alive = false;
  // Nobody may take a live lease: the dead workers' leases run out this long after the kill.
  const leasesLastMs =
    Math.max(...dying.flatMap((w) => [...w.held.values()].map((l) => l.expiresAt))) - fleet.now;
  const died = await settle(fleet, "10 workers die", 120_000);
  const afterExpiry = died.balancedAfterMs === null ? null : died.balancedAfterMs - leasesLastMs;
  console.log(
    `  their leases ran out ${(leasesLastMs / 1000).toFixed(2)} s after the kill: balanced ${((afterExpiry ?? Number.NaN) / 1000).toFixed(2)} s after that`,
  );
  const die = { ...died, leasesRanOutAfterMs: leasesLastMs, balancedAfterLeasesRanOutMs: afterExpiry };
  await fleet.run(20_000);
  // The joiners start at random within a rebalance interval of this call (unaligned phases):
  // "after they joined" is after the last of them started, and both are printed.
  const calledAt = fleet.now;
  const lastStartMs = Math.max(...fleet.join(10).map((w) => w.startAt)) - calledAt;
  const joined = await settle(fleet, "10 workers join", 120_000);
  const afterLast = joined.balancedAfterMs === null ? null : joined.balancedAfterMs - lastStartMs;
  console.log(
    `  the last of them started ${(lastStartMs / 1000).toFixed(2)} s after the join began: balanced ${((afterLast ?? Number.NaN) / 1000).toFixed(2)} s after that`,
  );
  const join = { ...joined, lastStartedAfterMs: lastStartMs, balancedAfterLastStartedMs: afterLast };
  await fleet.run(20_000);
  // A Lambda tick boundary: 10 runs drain and a new run of each one's slot starts.
  const ending = fleet.live().slice(0, 10);
  for (const w of ending) w.draining = true;
  fleet.join(
    10,
    ending.map((w) => w.slot),
  );
  const handover = await settle(fleet, "10 runs drain, 10 new runs of their slots start", 120_000);
  const movedToSlot = ending.every((w) => w.gone);
  await fleet.run(20_000);
  // Draining with no successor: kept until shortly before the deadline, then to anyone.
  const leaving = fleet.live().slice(0, 10);
  for (const w of leaving) {
    w.draining = true;
    w.deadline = fleet.now + 30_000;
  }
  const leave = await settle(fleet, "10 runs drain with no successor (deadline in 30 s)", 120_000);
  return {
    fleet,
    start,
    steady,
    die,
    join,
    handover: { ...handover, allEndingRunsGone: movedToSlot },
    leave,
  };
}

async function steadyOnly(partitions: number, workers: number): Promise<Units> {
  const fleet = new Fleet(partitions, SETTINGS);
  await fleet.setup();
  fleet.join(workers);
  await fleet.untilBalanced(120_000);
  await fleet.run(20_000);
  return fleet.run(60_000);
}

async function main(): Promise<void> {
  const t0 = Date.now();
  const big = await fullRun(PARTITIONS, WORKERS);
  const byOp = Object.fromEntries(big.fleet.counting.byOp);
  const steadyCost = dollarsPerMonth(big.steady);
  const withCheckpoints = dollarsPerMonth(big.steady, BUSY);
  console.log(`calls by operation over the whole run: ${JSON.stringify(byOp)}`);
  console.log(
    `steady cost: $${steadyCost.toFixed(2)}/month for the lease protocol; ` +
      `$${withCheckpoints.toFixed(2)}/month with ${BUSY} busy partitions checkpointing once a second`,
  );
  console.log("steady state by size (reads grow with partitions, not workers x partitions):");
  const sizes: Record<string, ReturnType<typeof fmt>> = {};
  for (const [p, w] of [
    [1_000, WORKERS],
    [PARTITIONS, WORKERS],
    [PARTITIONS, WORKERS / 2],
  ] as const) {
    const u = p === PARTITIONS && w === WORKERS ? big.steady : await steadyOnly(p, w);
    sizes[`${p}x${w}`] = fmt(u);
    console.log(`  ${p} partitions x ${w} workers: ${JSON.stringify(fmt(u))}`);
  }
  const interval = SETTINGS.rebalanceIntervalMs;
  const done =
    big.start.balancedAfterMs !== null &&
    big.start.balancedAfterMs <= 60_000 &&
    big.join.balancedAfterLastStartedMs !== null &&
    big.join.balancedAfterLastStartedMs <= 2 * interval;
  console.log(
    JSON.stringify({
      partitions: PARTITIONS,
      workers: WORKERS,
      settings: SETTINGS,
      start: big.start,
      steady: fmt(big.steady),
      afterDie: big.die,
      afterJoin: big.join,
      afterSlotHandover: big.handover,
      afterLeave: big.leave,
      bySize: sizes,
      pricesPerMillion: { read: 0.125, write: 0.625, region: "us-east-1", asOf: "2024-11-01" },
      dollarsPerMonth: {
        leaseProtocol: round(steadyCost),
        withCheckpoints: round(withCheckpoints),
        busyPartitions: BUSY,
      },
      startAndJoinWithinTarget: done,
      wallMs: Date.now() - t0,
    }),
  );
}

await main();
