/**
 * A holder lets a partition go with no transaction of its own left open (TargetWriter.
 * endOpenTransaction, called by the pump at the end of its term). Named after the bug they pin:
 * a run that ended, drained, handed over or failed a partition right after a write whose
 * transaction stayed open (a timeout, a refused record) aborted nothing, and every read_committed
 * consumer of that target partition waited at its first record for the next holder's fence or
 * the transaction timeout. The fake writer holds such a write as an open transaction
 * (late-commit-writer.ts) and ends it only when fenced.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Lease } from "../../../../lib/core/ports.js";
import { HeldLease } from "../../../../lib/core/pump/held-lease.js";
import { PartitionPump } from "../../../../lib/core/pump/partition-pump.js";
import { Worker } from "../../../../lib/core/run/worker.js";
import type { WorkerSettings } from "../../../../lib/core/run/worker-settings.js";
import { until } from "../../../helpers/fake-clock.js";
import { makeRecords } from "../../../helpers/fake-cluster.js";
import { storeWith } from "../../../helpers/fake-leases.js";
import { fakeMapping } from "../../../helpers/fake-mapping.js";
import { LateCommitWriter, type ZombieAnswer } from "../../../helpers/late-commit-writer.js";
import { dst, inMemoryWorld, PROVENANCE, pumpDeps, src } from "../../../helpers/pump-fixture.js";

function env() {
  const world = inMemoryWorld();
  world.source.createTopic("src", 1);
  world.target.createTopic("dst", 1);
  world.source.append(src, makeRecords(30, 0));
  return world;
}
type Env = ReturnType<typeof env>;

/** Write 2 (source offsets 10-19) is left open as `answer` says; fences are timed on e's clock. */
function writerFor(e: Env, answer: ZombieAnswer): LateCommitWriter {
  return new LateCommitWriter(e.target, { clock: e.clock }).strand(2, answer);
}

async function claim(e: Env, expiresIn = 60_000): Promise<HeldLease> {
  await e.store.ensure([src]);
  const claimed = await e.store.claim(e.store.get(src) as Lease, "w1", e.clock.now() + expiresIn);
  assert.ok(claimed);
  return new HeldLease(claimed, { source: src, target: dst }, Number.MAX_SAFE_INTEGER);
}

/** Exactly-once, 10 records a batch; a retry waits 1 s, so a stop comes before it. */
function pumpFor(e: Env, held: HeldLease, writer: LateCommitWriter): PartitionPump {
  return new PartitionPump(
    {
      ...pumpDeps(e),
      target: writer,
      targetTail: { reader: writer.reader, admin: writer.admin, logger: e.logger },
    },
    {
      batch: { maxRecords: 10, maxBytes: 1 << 20, maxWaitMs: 500 },
      startFrom: "earliest",
      writeSafetyMarginMs: 1_000,
      retry: { initialMs: 1_000, maxMs: 1_000 },
      provenance: PROVENANCE,
    },
    held,
  );
}

describe("the end of a pump's term", () => {
  it("aborts the transaction a timed-out write left open when the pump is stopped before its retry", async () => {
    // Prepare
    const e = env();
    const writer = writerFor(e, "times-out");
    const held = await claim(e);
    const running = pumpFor(e, held, writer).run();
    await until(e.clock, () => writer.pending);

    // Act: the worker stops (the run's end, a drain, a handoff) while the write awaits its retry.
    held.stop();
    const status = await running;

    // Assess
    assert.equal(status.stopReason, "stopped");
    assert.equal(writer.pending, false, writer.events.join(" > "));
    assert.deepEqual(writer.events.slice(-3), ["end open transaction", "fence", "open transaction aborted"]);
    assert.equal(e.store.get(src)?.checkpoint, 10, "the aborted write is not checkpointed");
  });

  it("aborts the transaction a refused record left open before the failed partition is given back", async () => {
    const e = env();
    const writer = writerFor(e, "refused");

    const status = await pumpFor(e, await claim(e), writer).run();

    assert.equal(status.error?.code, "RECORD_REJECTED");
    assert.equal(writer.pending, false, writer.events.join(" > "));
    assert.equal(e.store.get(src)?.checkpoint, 10);
  });

  it("leaves it to the successor's fence once the lease is lost: only a holder may fence", async () => {
    const e = env();
    const writer = writerFor(e, "times-out");
    const held = await claim(e);
    const running = pumpFor(e, held, writer).run();
    await until(e.clock, () => writer.pending);

    held.markLost();
    await running;

    assert.equal(writer.pending, true);
    assert.ok(!writer.events.includes("end open transaction"), writer.events.join(" > "));
  });

  it("says it is left open when the lease ran out before it could be aborted", async () => {
    // Prepare: a lease never renewed that ends before the write's retry may start (1 s margin).
    const e = env();
    const writer = writerFor(e, "times-out");
    const held = await claim(e, 1_500);

    // Act
    const status = await pumpFor(e, held, writer).run();

    // Assess
    assert.equal(status.stopReason, "lease-expired");
    assert.equal(writer.pending, true);
    assert.ok(writer.events.includes("open transaction left: no time"), writer.events.join(" > "));
    assert.equal(e.logger.at("warn").filter((l) => /is left open/.test(l.message)).length, 1);
  });
});

describe("a run that ends with a write's transaction open", () => {
  const SETTINGS: WorkerSettings = {
    batch: { maxRecords: 10, maxBytes: 1 << 20, maxWaitMs: 500 },
    leases: { durationMs: 10_000, renewIntervalMs: 3_000, rebalanceIntervalMs: 2_000 },
    startFrom: "earliest",
    replicationFactor: 1,
    writeSafetyMarginMs: 1_000,
    provenance: PROVENANCE,
  };

  it("aborts it before it releases the lease (SIGTERM in the CLI, a Lambda's deadline)", async () => {
    // Prepare: the lease store notes its releases among the writer's events.
    const e = env();
    const writer = writerFor(e, "times-out");
    const leases = storeWith(e.store, {
      release: async (lease) => {
        writer.events.push("release");
        return e.store.release(lease);
      },
    });
    const worker = new Worker({
      workerId: "w1",
      source: e.source,
      target: writer,
      sourceAdmin: e.source,
      targetAdmin: e.target,
      targetReader: writer.reader,
      leases,
      mapping: fakeMapping({ rename: () => "dst" }),
      settings: SETTINGS,
      clock: e.clock,
      logger: e.logger,
      metrics: e.metrics,
    });
    const stop = new AbortController();
    void until(e.clock, () => writer.pending).then(() => stop.abort());

    // Act
    const summary = await worker.replicate(e.clock.now() + 60_000, { signal: stop.signal });

    // Assess
    assert.equal(summary.endReason, "aborted");
    assert.equal(writer.pending, false, writer.events.join(" > "));
    const order = writer.events.filter((x) => ["open transaction aborted", "release"].includes(x));
    assert.deepEqual(order, ["open transaction aborted", "release"]);
  });
});
