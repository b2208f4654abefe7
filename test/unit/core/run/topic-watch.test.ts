/**
 * Discovery inside a run (lib/core/run/topic-watch.ts, called from the worker's loop): topics and
 * partitions that appear on the source while a run goes on are copied in the same run, from
 * their first offset, within a discovery interval and a lease round.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { TopicPlan } from "../../../../lib/core/plan/model.js";
import { TopicWatch } from "../../../../lib/core/run/topic-watch.js";
import { Worker } from "../../../../lib/core/run/worker.js";
import type { WorkerSettings } from "../../../../lib/core/run/worker-settings.js";
import { FakeClock, until } from "../../../helpers/fake-clock.js";
import { makeRecords } from "../../../helpers/fake-cluster.js";
import { fakeMapping } from "../../../helpers/fake-mapping.js";
import { CapturingLogger } from "../../../helpers/fake-observability.js";
import { inMemoryWorld } from "../../../helpers/pump-fixture.js";

const SETTINGS: WorkerSettings = {
  batch: { maxRecords: 50, maxBytes: 1 << 20, maxWaitMs: 500 },
  leases: { durationMs: 10_000, renewIntervalMs: 3_000, rebalanceIntervalMs: 5_000 },
  startFrom: "latest",
  replicationFactor: 1,
  writeSafetyMarginMs: 1_000,
  discoveryIntervalMs: 10_000,
};

type World = ReturnType<typeof inMemoryWorld>;

/** Records in a target partition; 0 while its topic does not exist. */
function copiedCount(w: World, topic: string, partition: number): number {
  try {
    return w.target.records({ topic, partition }).length;
  } catch {
    return 0;
  }
}

function worker(w: World, settings: WorkerSettings = SETTINGS): Worker {
  return new Worker({ ...workerOptions(w), settings });
}

function workerOptions(w: World): ConstructorParameters<typeof Worker>[0] {
  return {
    workerId: "A",
    source: w.source,
    target: w.target,
    sourceAdmin: w.source,
    targetAdmin: w.target,
    leases: w.store,
    mapping: fakeMapping(),
    settings: SETTINGS,
    clock: w.clock,
    logger: w.logger,
    metrics: w.metrics,
  };
}

describe("topic discovery in a run", () => {
  it("copies a topic created mid-run from its first offset within a discovery interval and a round", async () => {
    // Prepare: one topic at the start; another appears 20 s into the run, with records written
    // before any worker could have seen it.
    const w = inMemoryWorld();
    w.source.createTopic("old", 1);
    const start = w.clock.now();
    const run = worker(w).replicate(start + 120_000);
    await w.clock.sleep(20_000);
    w.source.createTopic("new", 2);
    w.source.setTopicConfigs("new", { "cleanup.policy": "compact" });
    for (const partition of [0, 1]) w.source.append({ topic: "new", partition }, makeRecords(30, partition));
    const createdAt = w.clock.now();

    // Act
    await until(w.clock, () => w.clock.now() > createdAt + 60_000 || copiedCount(w, "new", 1) === 30);
    const arrivedAt = w.clock.now();
    const summary = await run;

    // Assess: everything, from offset 0 although startFrom is "latest" for the run's own topics.
    for (const partition of [0, 1]) {
      assert.deepEqual(
        w.target.records({ topic: "new", partition }).map((r) => r.value?.toString("hex")),
        w.source.records({ topic: "new", partition }).map((r) => r.value?.toString("hex")),
      );
    }
    assert.ok(
      arrivedAt - createdAt <= 10_000 + 5_000 + 1_000,
      `arrived ${arrivedAt - createdAt} ms after creation`,
    );
    assert.equal(w.target.topicConfigs("new").get("cleanup.policy"), "compact");
    assert.deepEqual(summary.errors, []);
  });

  it("grows the target of a source topic grown mid-run and copies the new partitions, no error", async () => {
    const w = inMemoryWorld();
    w.source.createTopic("orders", 4);
    for (let p = 0; p < 4; p++) w.source.append({ topic: "orders", partition: p }, makeRecords(20, p));
    const run = worker(w, { ...SETTINGS, startFrom: "earliest" }).replicate(w.clock.now() + 120_000);
    await w.clock.sleep(15_000);
    w.source.growTopic("orders", 8);
    for (let p = 0; p < 8; p++) w.source.append({ topic: "orders", partition: p }, makeRecords(10, 100 + p));

    const summary = await run;

    assert.equal((await w.target.listTopics()).find((t) => t.name === "orders")?.partitions, 8);
    for (let p = 0; p < 8; p++) {
      assert.equal(
        w.target.records({ topic: "orders", partition: p }).length,
        p < 4 ? 30 : 10,
        `orders/${p}`,
      );
    }
    assert.deepEqual(summary.errors, []);
    assert.deepEqual(w.target.createPartitionCalls, [{ topic: "orders", count: 8 }]);
  });

  it("keeps target configs in sync on the discovery cadence and never deletes a target-only one", async () => {
    const w = inMemoryWorld();
    w.source.createTopic("logs", 1);
    w.source.setTopicConfigs("logs", { "retention.ms": "1000" });
    const run = worker(w).replicate(w.clock.now() + 60_000);
    await w.clock.sleep(5_000);
    w.target.setTopicConfigs("logs", { "retention.bytes": "42" });
    w.source.setTopicConfigs("logs", { "retention.ms": "2000" });

    await run;

    assert.deepEqual(Object.fromEntries(w.target.topicConfigs("logs")), {
      "retention.ms": "2000",
      "retention.bytes": "42",
    });
  });

  it("warns at the start and at every discovery while the whitelist selects nothing, and says why", async () => {
    const w = inMemoryWorld();
    w.source.createTopic("Orders", 1);
    const mapping = {
      ...fakeMapping({ select: () => false }),
      whyNothingSelected: (topics: readonly string[]) => `none of ${topics.join(",")}`,
    };
    const run = new Worker({ ...workerOptions(w), mapping });

    const summary = await run.replicate(w.clock.now() + 35_000);

    const warnings = w.logger
      .at("warn")
      .filter((e) => e.message.startsWith("the whitelist selects no topic"));
    assert.ok(warnings.length >= 3, `start and each 10 s discovery warned: ${warnings.length}`);
    assert.deepEqual(warnings[0]?.fields, { why: "none of Orders" });
    assert.equal(summary.emptySelection, "none of Orders");
  });

  it("stops warning once a topic is selected, and the summary says nothing is missing", async () => {
    const w = inMemoryWorld();
    let selected = false;
    const mapping = { ...fakeMapping({ select: () => selected }), whyNothingSelected: () => "none" };
    w.source.createTopic("a", 1);
    const run = new Worker({ ...workerOptions(w), mapping });
    const done = run.replicate(w.clock.now() + 60_000);
    await until(w.clock, () => w.logger.at("warn").length > 0);
    selected = true;

    const summary = await done;

    assert.equal(summary.emptySelection, null);
  });

  it("reports a topic that stays in error once per run, not every discovery", async () => {
    const w = inMemoryWorld();
    w.source.createTopic("a", 2);
    w.target.createTopic("a", 1);
    w.target.createPartitions = async () => {
      throw new Error("refused");
    };

    const summary = await worker(w).replicate(w.clock.now() + 60_000);

    assert.deepEqual(
      summary.errors.map((e) => [e.topic, e.code]),
      [["a", "TARGET_PARTITIONS_TOO_FEW"]],
    );
  });
});

describe("TopicWatch.nextAt", () => {
  it("is not due while a discovery runs (regression: issue 13's stall, a run loop spinning on its past due time)", async () => {
    // Prepare: a discovery that does not answer until released.
    const clock = new FakeClock(0, { autoAdvance: false });
    let release = () => {};
    const planned = new Promise<TopicPlan>((resolve) => {
      release = () => resolve({ partitions: [], errors: [], warnings: [], drift: [], emptySelection: null });
    });
    const watch = new TopicWatch({
      plan: () => planned,
      ensure: async () => {},
      clock,
      intervalMs: 10_000,
      logger: new CapturingLogger(),
      onTopicError: () => {},
    });

    // Act: the discovery falls due and starts.
    clock.advance(10_000);
    watch.poll(clock.now());

    // Assess: nothing to wake up for while it runs; due again an interval after it ended.
    assert.ok(watch.nextAt > clock.now(), `nextAt ${watch.nextAt} is not after now ${clock.now()}`);
    clock.advance(3_000);
    release();
    await watch.stop();
    assert.equal(watch.nextAt, 23_000);
  });
});
