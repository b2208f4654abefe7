/**
 * Checkpoint coalescing (leases.checkpointIntervalMs): at most one routine checkpoint per
 * partition per interval, a stop checkpoints at once, and in exactly-once mode a holder killed
 * between two coalesced checkpoints costs neither a lost nor a duplicated record.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { MirrorRecord } from "../../../../lib/core/model.js";
import type { Lease, LeaseStore } from "../../../../lib/core/ports.js";
import { lastProvenance } from "../../../../lib/core/provenance.js";
import { HeldLease } from "../../../../lib/core/pump/held-lease.js";
import { PartitionPump, type PumpSettings } from "../../../../lib/core/pump/partition-pump.js";
import { until } from "../../../helpers/fake-clock.js";
import { makeRecords } from "../../../helpers/fake-cluster.js";
import { storeWith } from "../../../helpers/fake-leases.js";
import {
  dst,
  HEADER,
  inMemoryWorld,
  PROVENANCE,
  pumpDeps,
  runUntilCaughtUp,
  src,
} from "../../../helpers/pump-fixture.js";

const FAR = Number.MAX_SAFE_INTEGER;
const INTERVAL_MS = 1_000;

/** A world whose target takes 200 ms per write, so a run of batches spans several intervals. */
function env() {
  const world = inMemoryWorld();
  world.source.createTopic("src", 1);
  world.target.createTopic("dst", 1);
  world.target.writeGroups = { records: 10, ms: 200 };
  /** The store the pumps are given (countCheckpoints wraps the world's). */
  const pumpStore: { current: LeaseStore } = { current: world.store };
  return { ...world, pumpStore };
}
type Env = ReturnType<typeof env>;

async function claim(e: Env, owner: string, expiresIn = 600_000): Promise<HeldLease> {
  await e.store.ensure([src]);
  const claimed = await e.store.claim(e.store.get(src) as Lease, owner, e.clock.now() + expiresIn);
  assert.ok(claimed, `${owner} could not claim`);
  return new HeldLease(claimed, { source: src, target: dst }, FAR);
}

/** Notes when each checkpoint call reached the store, and its offset. */
function countCheckpoints(e: Env): { at: number; offset: number }[] {
  const calls: { at: number; offset: number }[] = [];
  const store = e.store;
  e.pumpStore.current = storeWith(store, {
    checkpoint: (held, next, now, position, source, producerIds) => {
      calls.push({ at: e.clock.now(), offset: next });
      return store.checkpoint(held, next, now, position, source, producerIds);
    },
  });
  return calls;
}

function pumpFor(e: Env, held: HeldLease, settings: Partial<PumpSettings> = {}): PartitionPump {
  const exactlyOnce = settings.provenance !== undefined && settings.provenance !== null;
  return new PartitionPump(
    {
      ...pumpDeps(e),
      store: e.pumpStore.current,
      ...(exactlyOnce ? { targetTail: { reader: e.target, admin: e.target, logger: e.logger } } : {}),
    },
    {
      batch: { maxRecords: 10, maxBytes: 1 << 20, maxWaitMs: 500 },
      startFrom: "earliest",
      writeSafetyMarginMs: 1_000,
      retry: { initialMs: 50, maxMs: 1_000 },
      checkpointIntervalMs: INTERVAL_MS,
      ...settings,
    },
    held,
  );
}

const copiedOffsets = (e: Env) =>
  e.target.records(dst).map((r: MirrorRecord) => lastProvenance(r, HEADER)?.offset ?? -1);
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe("Checkpointer, coalesced", () => {
  it("writes at most one routine checkpoint per interval, and the last covers the log end", async () => {
    // Prepare: 200 records in batches of 10, each write 200 ms: 20 batches over 4 s.
    const e = env();
    const calls = countCheckpoints(e);
    e.source.append(src, makeRecords(200, 0));

    // Act
    const status = await runUntilCaughtUp(e.clock, pumpFor(e, await claim(e, "w1")));

    // Assess: far fewer checkpoints than batches, none closer than the interval to the one before
    // (the start's pin, offset 0, comes before the routine ones), and the end recorded: by the
    // stop's flush, at once, as the pump is caught up once the end is written.
    assert.equal(status.error, null);
    const routine = calls.filter((c) => c.offset > 0);
    assert.ok(routine.length >= 2 && routine.length <= 6, `checkpoints: ${JSON.stringify(routine)}`);
    assert.equal(routine.at(-1)?.offset, 200);
    for (let i = 1; i < routine.length - 1; i++) {
      const gap = (routine[i]?.at ?? 0) - (routine[i - 1]?.at ?? 0);
      assert.ok(gap >= INTERVAL_MS, `checkpoints ${gap} ms apart: ${JSON.stringify(routine)}`);
    }
    assert.equal(e.store.get(src)?.checkpoint, 200);
    assert.equal(e.target.records(dst).length, 200);
  });

  it("with interval 0 checkpoints every batch, as before", async () => {
    const e = env();
    const calls = countCheckpoints(e);
    e.source.append(src, makeRecords(100, 0));

    await runUntilCaughtUp(e.clock, pumpFor(e, await claim(e, "w1"), { checkpointIntervalMs: 0 }));

    assert.deepEqual(
      calls.filter((c) => c.offset > 0).map((c) => c.offset),
      range(10).map((i) => (i + 1) * 10),
    );
  });

  it("a trickle that is caught up still reaches the store within the interval and a fetch wait", async () => {
    const e = env();
    e.source.append(src, makeRecords(5, 0));
    const pump = pumpFor(e, await claim(e, "w1"));
    const running = pump.run();
    await until(e.clock, () => e.store.get(src)?.checkpoint === 5);

    // One more record, written right after that checkpoint: its checkpoint waits for the interval.
    e.source.append(src, makeRecords(1, 1));
    const appendedAt = e.clock.now();
    await until(e.clock, () => e.target.records(dst).length === 6);
    assert.equal(e.store.get(src)?.checkpoint, 5);
    await until(e.clock, () => e.store.get(src)?.checkpoint === 6);

    assert.ok(
      e.clock.now() - appendedAt <= INTERVAL_MS + 500 + 200,
      `after ${e.clock.now() - appendedAt} ms`,
    );
    pump.held.stop();
    await running;
  });

  it("a requested handoff checkpoints at once, inside the interval", async () => {
    // Prepare: copying, with the last batch's checkpoint held back by the interval.
    const e = env();
    const calls = countCheckpoints(e);
    e.source.append(src, makeRecords(30, 0));
    const held = await claim(e, "w1");
    const pump = pumpFor(e, held, { checkpointIntervalMs: 60_000 });
    const running = pump.run();
    await until(e.clock, () => e.target.records(dst).length === 30);
    assert.equal(e.store.get(src)?.checkpoint, 10);

    // Act: another worker asks; the holder sees it at its next lease update (a renewal).
    assert.ok(await e.store.requestHandoff(held.lease, "w2"));
    held.update(await e.store.renew(held.lease, e.clock.now() + 600_000));
    const status = await running;

    // Assess: everything written is checkpointed before the pump gives the partition up.
    assert.equal(status.stopReason, "stopped");
    assert.equal(e.store.get(src)?.checkpoint, 30);
    assert.equal(calls.at(-1)?.offset, 30);
  });

  for (const kill of ["after its sixth write landed", "while its seventh write is on its way"] as const) {
    it(`exactly-once: a holder killed between coalesced checkpoints, ${kill}, loses and duplicates nothing`, async () => {
      // Prepare: the first holder dies; its checkpoints are coalesced, so the store is one or
      // more batches behind what landed in the target.
      const e = env();
      e.source.append(src, makeRecords(100, 0));
      let writes = 0;
      const dead = () => new Promise<void>(() => {});
      if (kill === "after its sixth write landed") {
        e.target.hooks.afterWrite = () => (++writes === 6 ? dead() : undefined);
      } else {
        e.target.hooks.beforeWrite = () => (++writes === 7 ? dead() : undefined);
      }
      void pumpFor(e, await claim(e, "w1", 5_000), { provenance: PROVENANCE }).run();
      await until(e.clock, () => writes === (kill === "after its sixth write landed" ? 6 : 7));
      const landed = e.target.records(dst).length;
      const stored = e.store.get(src)?.checkpoint ?? 0;
      if (kill === "after its sixth write landed")
        assert.ok(
          stored < landed,
          `the store is behind what landed (checkpoint ${stored}, ${landed} landed)`,
        );
      e.target.hooks.afterWrite = undefined;
      e.target.hooks.beforeWrite = undefined;

      // Act: the lease runs out; the next holder takes over from the stale checkpoint.
      e.clock.advance(6_000);
      const next = pumpFor(e, await claim(e, "w2"), { provenance: PROVENANCE });
      const status = await runUntilCaughtUp(e.clock, next);

      // Assess: every source offset once, in order.
      assert.equal(status.error, null);
      assert.deepEqual(copiedOffsets(e), range(100));
      assert.equal(e.store.get(src)?.checkpoint, 100);
    });
  }

  it("at-least-once: a holder killed between coalesced checkpoints repeats at most what came after the stored one", async () => {
    const e = env();
    e.source.append(src, makeRecords(100, 0));
    let writes = 0;
    e.target.hooks.afterWrite = () => {
      writes++;
      if (writes === 6) return new Promise<void>(() => {});
    };
    void pumpFor(e, await claim(e, "w1", 5_000)).run();
    await until(e.clock, () => writes === 6);
    const stored = e.store.get(src)?.checkpoint ?? 0;
    e.target.hooks.afterWrite = undefined;

    e.clock.advance(6_000);
    await runUntilCaughtUp(e.clock, pumpFor(e, await claim(e, "w2")));

    // Nothing lost; the repeats are exactly the landed records past the stored checkpoint.
    assert.equal(e.target.records(dst).length, 100 + (60 - stored));
    assert.ok(60 - stored <= 10 * Math.ceil(INTERVAL_MS / 200) + 10, `repeated ${60 - stored}`);
  });
});
