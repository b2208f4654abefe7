/**
 * Property: workers that act at the same time never copy a record twice or lose one, whatever
 * the order in which their lease-store requests land. Real Workers (coordinator, renewer, pumps)
 * in exactly-once mode run side by side over the in-memory fakes on virtual time; every lease
 * store request of a worker takes its own time to land and its answer its own time to come back
 * (sometimes longer than a lease), so renewals, claims, checkpoints and handoffs of different
 * workers interleave arbitrarily; each worker has its own clock, off by less than the write
 * margin; workers die (every call hangs from then on, like a SIGKILL) and new ones start. Two
 * properties: by the lease alone (writers that do not fence: the lease protocol must keep two
 * holders from writing), and with fencing (each worker's FencedWriter), where some target writes
 * also land a lease or more late, as a frozen worker's do, and only the fence stops them. The
 * holders of exactly-once.property.test.ts take turns; these race.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import type { MirrorRecord, TopicPartition } from "../../../../lib/core/model.js";
import type { Clock, LeaseStore, TargetWriter } from "../../../../lib/core/ports.js";
import { lastProvenance, type ProvenanceSettings } from "../../../../lib/core/provenance.js";
import { Worker } from "../../../../lib/core/run/worker.js";
import type { WorkerSettings } from "../../../../lib/core/run/worker-settings.js";
import { FakeClock, seededRandom } from "../../../helpers/fake-clock.js";
import { InMemoryCluster, makeRecords } from "../../../helpers/fake-cluster.js";
import { fakeMapping } from "../../../helpers/fake-mapping.js";
import { CapturingLogger, CapturingMetrics } from "../../../helpers/fake-observability.js";
import { FencedWriter } from "../../../helpers/fenced-writer.js";
import { InMemoryLeaseStore } from "../../../helpers/memory-lease-store.js";
import { writerWith } from "../../../helpers/writer-with.js";

const HEADER = Buffer.from("kafka-mirror.provenance");
const PROVENANCE: ProvenanceSettings = { header: HEADER, sourceAlias: "A", targetAlias: "B" };
const PARTITIONS = 4;
const MARGIN_MS = 500;
const SETTINGS: WorkerSettings = {
  batch: { maxRecords: 5, maxBytes: 1 << 20, maxWaitMs: 100 },
  leases: { durationMs: 900, renewIntervalMs: 250, rebalanceIntervalMs: 250 },
  startFrom: "earliest",
  replicationFactor: 1,
  writeSafetyMarginMs: MARGIN_MS,
  // As in production: a write takes along what was read ahead already (SourceFeed.withReady).
  writeMaxBytes: 4 << 20,
  provenance: PROVENANCE,
};
/** How long the racing fleet runs, in virtual ms. */
const RACE_MS = 8_000;
/** A target write lands at most this long after it was sent (well inside the margin). */
const MAX_WRITE_DELAY_MS = 50;

interface WorkerPlan {
  /** Offset of this worker's clock from true time; pairwise differences stay under the margin. */
  readonly skewMs: number;
  readonly startAtMs: number;
  /** Dies (every call hangs forever) this long after it started, or never. */
  readonly dieAfterMs: number | null;
  /** Length of each replicate() run: it starts a new one when one ends, like Lambda ticks. */
  readonly runMs: number;
}

interface Scenario {
  readonly seed: number;
  /** Chance that one lease-store request is caught in a slow burst instead of landing at once. */
  readonly slowChance: number;
  /** Longest delay of a slow request (or its answer): up to several lease durations. */
  readonly slowMaxMs: number;
  /**
   * Chance that a target write lands only after one to three lease durations, as the write of a
   * worker frozen mid-write (or a request stuck in the network) does: fencing must refuse it.
   */
  readonly zombieChance: number;
  /**
   * Whether the writers fence (target.fencing transactional). Without it only the lease keeps
   * writers apart, which is what the lease protocol itself must get right.
   */
  readonly fencing: boolean;
  readonly workers: readonly WorkerPlan[];
}

const workerArb: fc.Arbitrary<WorkerPlan> = fc.record({
  skewMs: fc.integer({ min: -200, max: 200 }),
  startAtMs: fc.integer({ min: 0, max: 4_000 }),
  dieAfterMs: fc.option(fc.integer({ min: 500, max: 12_000 }), { nil: null, freq: 2 }),
  runMs: fc.integer({ min: 3_000, max: 12_000 }),
});

/** Scenarios of workers that fence (and writes that land late), or of the lease alone. */
function scenarios(fencing: boolean): fc.Arbitrary<Scenario> {
  return fc.record({
    seed: fc.integer(),
    slowChance: fc.constantFrom(0.05, 0.1, 0.2),
    slowMaxMs: fc.constantFrom(1_000, 2_000, 4_000),
    // Without fencing a write landing a lease late duplicates by design (target.fencing none).
    zombieChance: fencing ? fc.constantFrom(0, 0.01, 0.03) : fc.constant(0),
    fencing: fc.constant(fencing),
    workers: fc.array(workerArb, { minLength: 3, maxLength: 5 }),
  });
}

/** One worker's view of the world: its own clock, its own network delays, and a kill switch. */
class Node {
  dead = false;
  readonly clock: Clock;
  readonly #truth: FakeClock;
  readonly #random: () => number;
  readonly #scenario: Scenario;

  constructor(truth: FakeClock, skewMs: number, scenario: Scenario, seed: number) {
    this.#truth = truth;
    this.#scenario = scenario;
    this.#random = seededRandom(seed);
    this.clock = {
      now: () => truth.now() + skewMs,
      sleep: (ms, signal) => truth.sleep(ms, signal),
    };
  }

  /** A request to the lease store: travels, lands atomically, and its answer travels back. */
  async call<T>(op: () => Promise<T>): Promise<T> {
    await this.#travel();
    let outcome: { ok: true; value: T } | { ok: false; error: unknown };
    try {
      outcome = { ok: true, value: await op() };
    } catch (error) {
      outcome = { ok: false, error };
    }
    await this.#travel();
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  }

  /** A call that never returns once the worker is dead. */
  async alive(): Promise<void> {
    if (this.dead) await new Promise<never>(() => {});
  }

  async writeDelay(): Promise<void> {
    await this.alive();
    const lease = SETTINGS.leases.durationMs;
    const zombie = this.#random() < this.#scenario.zombieChance;
    const ms = zombie ? lease * (1 + 2 * this.#random()) : this.#random() * MAX_WRITE_DELAY_MS;
    await this.#truth.sleep(Math.floor(ms));
    await this.alive();
  }

  async #travel(): Promise<void> {
    await this.alive();
    const { slowChance, slowMaxMs } = this.#scenario;
    const draw = this.#random();
    // Mostly quick; some a few round trips late; some around a lease duration or more, which is
    // where a renewal lands just after the lease looked expired to someone else.
    const ms =
      draw < slowChance
        ? SETTINGS.leases.durationMs / 2 + this.#random() * slowMaxMs
        : draw < slowChance + 0.25
          ? this.#random() * 300
          : this.#random() * 20;
    await this.#truth.sleep(Math.floor(ms));
    await this.alive();
  }
}

function storeFor(node: Node, store: LeaseStore): LeaseStore {
  return {
    ensure: (partitions) => node.call(() => store.ensure(partitions)),
    list: () => node.call(() => store.list()),
    lease: (tp) => node.call(() => store.lease(tp)),
    scan: () => node.call(() => store.scan()),
    heartbeat: (beat, options) => node.call(() => store.heartbeat(beat, options)),
    assign: (workerId, assignment) => node.call(() => store.assign(workerId, assignment)),
    removeWorker: (observed) => node.call(() => store.removeWorker(observed)),
    worker: (workerId, options) => node.call(() => store.worker(workerId, options)),
    leader: () => node.call(() => store.leader()),
    claimLeader: (observed, owner, expiresAt) =>
      node.call(() => store.claimLeader(observed, owner, expiresAt)),
    claim: (observed, owner, expiresAt) => node.call(() => store.claim(observed, owner, expiresAt)),
    renew: (held, expiresAt) => node.call(() => store.renew(held, expiresAt)),
    checkpoint: (held, next, now, targetOffset, source, producerIds) =>
      node.call(() => store.checkpoint(held, next, now, targetOffset, source, producerIds)),
    resetCheckpoint: (held, next, now, reason, position) =>
      node.call(() => store.resetCheckpoint(held, next, now, reason, position)),
    release: (held) => node.call(() => store.release(held)),
    requestHandoff: (observed, requester) => node.call(() => store.requestHandoff(observed, requester)),
    withdrawHandoff: (observed, requester) => node.call(() => store.withdrawHandoff(observed, requester)),
    handOver: (held, expiresAt) => node.call(() => store.handOver(held, expiresAt)),
  };
}

/**
 * The worker's own producer, fenced or not; each write lands after its delay, where a fenced
 * writer's epoch is checked.
 */
function writerFor(node: Node, target: InMemoryCluster, fencing: boolean): TargetWriter {
  const writer: TargetWriter = fencing ? new FencedWriter(target) : target;
  return writerWith(writer, {
    write: async (tp: TopicPartition, records: readonly MirrorRecord[], stamp, deadline, runDeadline) => {
      await node.writeDelay();
      return writer.write(tp, records, stamp, deadline, runDeadline);
    },
    fence: async (tp) => {
      await node.alive();
      await writer.fence(tp);
    },
  });
}

function workerOn(
  node: Node,
  id: string,
  world: { source: InMemoryCluster; target: InMemoryCluster; store: LeaseStore },
  fencing: boolean,
): Worker {
  return new Worker({
    workerId: id,
    source: world.source,
    target: writerFor(node, world.target, fencing),
    sourceAdmin: world.source,
    targetAdmin: world.target,
    targetReader: world.target,
    leases: storeFor(node, world.store),
    mapping: fakeMapping({ rename: (t) => `dr.${t}` }),
    settings: SETTINGS,
    clock: node.clock,
    logger: new CapturingLogger(),
    metrics: new CapturingMetrics(),
  });
}

async function race(scenario: Scenario): Promise<void> {
  const truth = new FakeClock();
  const source = new InMemoryCluster(truth);
  const target = new InMemoryCluster(truth);
  const store = new InMemoryLeaseStore();
  source.createTopic("src", PARTITIONS);
  const world = { source, target, store };
  const start = truth.now();
  const end = start + RACE_MS;

  // Steady traffic on every partition while the fleet races.
  const producing = (async () => {
    for (let tag = 0; truth.now() < end; tag++) {
      for (let p = 0; p < PARTITIONS; p++) source.append({ topic: "src", partition: p }, makeRecords(2, tag));
      await truth.sleep(40);
    }
  })();

  const fleet = scenario.workers.map(async (plan, i) => {
    await truth.sleep(plan.startAtMs);
    const node = new Node(truth, plan.skewMs, scenario, scenario.seed + i);
    const worker = workerOn(node, `w${i}`, world, scenario.fencing);
    if (plan.dieAfterMs !== null) {
      void truth.sleep(plan.dieAfterMs).then(() => {
        node.dead = true;
      });
    }
    while (!node.dead && truth.now() < end) {
      const deadline = node.clock.now() + Math.min(plan.runMs, end - truth.now());
      // A dead worker's run never returns: stop waiting for it at the end of the race.
      await Promise.race([worker.replicate(deadline), truth.sleep(end - truth.now() + 1)]);
    }
  });
  await Promise.all([producing, ...fleet]);

  // A healthy worker finishes the job once every lease the fleet held has run out.
  await truth.sleep(3 * SETTINGS.leases.durationMs + scenario.slowMaxMs * 2);
  const calm = { ...scenario, slowChance: 0, zombieChance: 0 };
  const sweeper = workerOn(new Node(truth, 0, calm, 7), "sweeper", world, scenario.fencing);
  const summary = await sweeper.replicate(truth.now() + 60_000, { stopWhenCaughtUp: true });
  assert.equal(summary.caughtUp, true, `the sweeper did not catch up: ${JSON.stringify(summary.errors)}`);

  for (let p = 0; p < PARTITIONS; p++) {
    const expected = source.records({ topic: "src", partition: p }).map((r) => r.offset);
    const copied = target
      .records({ topic: "dr.src", partition: p })
      .map((r) => lastProvenance(r, HEADER)?.offset ?? -1);
    assert.deepEqual(copied, expected, `src/${p}: ${describeMismatch(copied, expected)}`);
  }
}

function describeMismatch(copied: readonly number[], expected: readonly number[]): string {
  const seen = new Set<number>();
  const repeated = copied.filter((o) => seen.has(o) || !seen.add(o));
  const missing = expected.filter((o) => !seen.has(o));
  return `${copied.length} records for ${expected.length} offsets; repeated ${JSON.stringify(repeated)}, missing ${JSON.stringify(missing)}`;
}

/** What the lease-alone property shrank seed 164430370's failure to. */
const SEED_164430370: Scenario = {
  seed: -1332773640,
  slowChance: 0.05,
  slowMaxMs: 1000,
  zombieChance: 0,
  fencing: false,
  workers: [
    { skewMs: 0, startAtMs: 2782, dieAfterMs: null, runMs: 3000 },
    { skewMs: 0, startAtMs: 3330, dieAfterMs: null, runMs: 3578 },
    { skewMs: 0, startAtMs: 2904, dieAfterMs: null, runMs: 4558 },
    { skewMs: 0, startAtMs: 2997, dieAfterMs: null, runMs: 4574 },
    { skewMs: 79, startAtMs: 1219, dieAfterMs: 4017, runMs: 4531 },
  ],
};

/** LEASE_RACE_SEED replays a failing run: fast-check draws the same scenarios for a seed. */
function replay(): { seed?: number } {
  const seed = process.env.LEASE_RACE_SEED;
  return seed === undefined ? {} : { seed: Number(seed) };
}

describe("workers racing on one lease table", () => {
  it("copy every source offset exactly once, in order, by the lease alone, however their lease-store requests interleave", async () => {
    await fc.assert(
      fc.asyncProperty(scenarios(false), (scenario) => race(scenario)),
      { numRuns: Number(process.env.LEASE_RACE_RUNS ?? 400), ...replay() },
    );
  });

  it("copy every source offset exactly once in the scenario LEASE_RACE_SEED=164430370 found (a giver took up the lease it was handing over)", async () => {
    // The shrunk counterexample, replayed as is: the run is deterministic (virtual time, seeded
    // draws). Without the fix it copies src/3's offsets 85..89 twice.
    await race(SEED_164430370);
  });

  it("copy every source offset exactly once, in order, with fencing, also when writes land a lease or more late", async () => {
    await fc.assert(
      fc.asyncProperty(scenarios(true), (scenario) => race(scenario)),
      { numRuns: Number(process.env.LEASE_RACE_RUNS ?? 150), ...replay() },
    );
  });
});
