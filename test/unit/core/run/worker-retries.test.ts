/**
 * The worker's retries of lease store and cluster calls end at the first failure that is not
 * retryable: the run rejects with it within the same instant of fake time, having tried once.
 * Each case has a retryable twin that is retried, so the count measures the retry policy.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ClusterAdmin, LeaseStore } from "../../../../lib/core/ports.js";
import { Worker } from "../../../../lib/core/run/worker.js";
import type { WorkerSettings } from "../../../../lib/core/run/worker-settings.js";
import { isReplicatorError, ReplicatorError } from "../../../../lib/errors.js";
import { makeRecords } from "../../../helpers/fake-cluster.js";
import { storeWith } from "../../../helpers/fake-leases.js";
import { fakeMapping } from "../../../helpers/fake-mapping.js";
import { flakyAdmin } from "../../../helpers/flaky.js";
import { inMemoryWorld } from "../../../helpers/pump-fixture.js";

const SETTINGS: WorkerSettings = {
  batch: { maxRecords: 20, maxBytes: 1 << 20, maxWaitMs: 500 },
  leases: { durationMs: 10_000, renewIntervalMs: 3_000, rebalanceIntervalMs: 2_000 },
  startFrom: "earliest",
  replicationFactor: 1,
  writeSafetyMarginMs: 1_000,
};
const RUN_MS = 60_000;
const TOPIC = "orders";

/** A refusal no retry changes (a table deleted, access denied). */
const invalidTable = () => new ReplicatorError("LEASE_STORE_INVALID", "lease table leases does not exist");
/** A store that throttles: worth another attempt. */
const throttled = () => new ReplicatorError("LEASE_STORE_UNAVAILABLE", "lease table leases is throttling");

function world() {
  const w = inMemoryWorld();
  w.source.createTopic(TOPIC, 2);
  for (const partition of [0, 1]) w.source.append({ topic: TOPIC, partition }, makeRecords(50, partition));
  return w;
}
type World = ReturnType<typeof world>;

function worker(w: World, ports: { leases?: LeaseStore; sourceAdmin?: ClusterAdmin } = {}) {
  return new Worker({
    workerId: "W",
    source: w.source,
    target: w.target,
    sourceAdmin: ports.sourceAdmin ?? w.source,
    targetAdmin: w.target,
    leases: ports.leases ?? w.store,
    mapping: fakeMapping({ rename: (t) => `dr.${t}` }),
    settings: SETTINGS,
    clock: w.clock,
    logger: w.logger,
    metrics: w.metrics,
  });
}

/** replicate()'s rejection and the fake time it took, or its summary. */
async function run(w: World, leases?: LeaseStore) {
  const startedAt = w.clock.now();
  const outcome = await worker(w, leases === undefined ? {} : { leases })
    .replicate(startedAt + RUN_MS)
    .then(
      (summary) => ({ summary, error: undefined }),
      (error: unknown) => ({ summary: undefined, error }),
    );
  return { ...outcome, tookMs: w.clock.now() - startedAt };
}

describe("Worker retries", () => {
  it("ends the run at the first non-retryable failure to create lease items", async () => {
    const w = world();
    let attempts = 0;
    const leases = storeWith(w.store, {
      ensure: async () => {
        attempts++;
        throw invalidTable();
      },
    });

    const { error, tookMs } = await run(w, leases);

    assert.ok(isReplicatorError(error, "LEASE_STORE_INVALID"), String(error));
    assert.equal(attempts, 1);
    assert.equal(tookMs, 0);
  });

  it("retries a retryable failure to create lease items (the twin of the case above)", async () => {
    const w = world();
    let attempts = 0;
    const leases = storeWith(w.store, {
      ensure: async (partitions) => {
        if (++attempts <= 3) throw throttled();
        return w.store.ensure(partitions);
      },
    });

    const { error } = await run(w, leases);

    assert.equal(error, undefined);
    assert.equal(attempts, 4);
  });

  it("ends the run when a lease round fails for good, after winding its pumps down", async () => {
    // Prepare: the heartbeat works for the first rounds (leases are taken, pumps run), then the
    // table is refused for good.
    const w = world();
    let rounds = 0;
    let refused = 0;
    const leases = storeWith(w.store, {
      heartbeat: async (beat, options) => {
        if (beat.draining) return w.store.heartbeat(beat, options);
        if (++rounds > 2) {
          refused++;
          throw invalidTable();
        }
        return w.store.heartbeat(beat, options);
      },
    });

    // Act
    const { error, tookMs } = await run(w, leases);

    // Assess: one refused round, well before the deadline, and the leases freed for others.
    assert.ok(isReplicatorError(error, "LEASE_STORE_INVALID"), String(error));
    assert.equal(refused, 1);
    assert.ok(tookMs < RUN_MS / 2, `${tookMs} ms`);
    for (const partition of [0, 1]) {
      assert.ok(w.target.records({ topic: `dr.${TOPIC}`, partition }).length > 0, "its pumps had run");
      assert.equal(w.store.get({ topic: TOPIC, partition })?.owner, null);
    }
  });

  it("goes on through lease rounds that fail retryably (the twin of the case above)", async () => {
    const w = world();
    let refused = 0;
    const leases = storeWith(w.store, {
      heartbeat: async (beat, options) => {
        if (!beat.draining && refused < 3) {
          refused++;
          throw throttled();
        }
        return w.store.heartbeat(beat, options);
      },
    });

    const { error, summary } = await run(w, leases);

    assert.equal(error, undefined);
    assert.equal(refused, 3);
    assert.equal(
      summary?.partitions.reduce((n, p) => n + p.records, 0),
      100,
    );
  });

  it("ends the run at the first non-retryable failure to list the source's topics", async () => {
    const w = world();
    const refused = (method: string) =>
      new ReplicatorError("KAFKA_FATAL", `${method}: TOPIC_AUTHORIZATION_FAILED`, { retryable: false });
    const sourceAdmin = flakyAdmin(w.source, { failures: 100, methods: ["listTopics"], error: refused });
    const startedAt = w.clock.now();

    const error = await worker(w, { sourceAdmin })
      .replicate(startedAt + RUN_MS)
      .then(
        () => undefined,
        (e: unknown) => e,
      );

    assert.ok(isReplicatorError(error, "KAFKA_FATAL"), String(error));
    assert.equal(sourceAdmin.failed.get("listTopics"), 1);
    assert.equal(w.clock.now() - startedAt, 0);
  });
});
