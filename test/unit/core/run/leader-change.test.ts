/**
 * PartitionPump in exactly-once mode over a source whose leader changes cleanly (a rolling
 * restart, a preferred-leader election: the leader epoch bumps, nothing is truncated), over the
 * in-memory fakes. Every path that stores a checkpoint must store the epoch that goes with it, or
 * the next holder takes the clean change for an unclean truncation and copies a range again.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { MirrorRecord } from "../../../../lib/core/model.js";
import type { Lease } from "../../../../lib/core/ports.js";
import { lastProvenance } from "../../../../lib/core/provenance.js";
import { HeldLease } from "../../../../lib/core/pump/held-lease.js";
import { PartitionPump } from "../../../../lib/core/pump/partition-pump.js";
import { until } from "../../../helpers/fake-clock.js";
import { makeRecords } from "../../../helpers/fake-cluster.js";
import {
  dst,
  HEADER,
  PROVENANCE,
  pumpDeps,
  runUntilCaughtUp,
  src,
  srcDstWorld,
} from "../../../helpers/pump-fixture.js";

const env = srcDstWorld;
type Env = ReturnType<typeof env>;

async function claim(e: Env, owner: string, expiresIn = 60_000, hardDeadline = Number.MAX_SAFE_INTEGER) {
  await e.store.ensure([src]);
  const observed = e.store.get(src) as Lease;
  const claimed = await e.store.claim(observed, owner, e.clock.now() + expiresIn);
  assert.ok(claimed, `${owner} could not claim`);
  return new HeldLease(claimed, { source: src, target: dst }, hardDeadline);
}

function pumpFor(e: Env, held: HeldLease, maxRecords = 10): PartitionPump {
  return new PartitionPump(
    { ...pumpDeps(e), targetTail: { reader: e.target, admin: e.target, logger: e.logger } },
    {
      batch: { maxRecords, maxBytes: 1 << 20, maxWaitMs: 500 },
      startFrom: "earliest",
      writeSafetyMarginMs: 1_000,
      retry: { initialMs: 50, maxMs: 1_000 },
      provenance: PROVENANCE,
    },
    held,
  );
}

/** One holder copies until caught up and gives the lease back. */
async function copyAll(e: Env, owner: string): Promise<void> {
  const held = await claim(e, owner);
  const status = await runUntilCaughtUp(e.clock, pumpFor(e, held));
  assert.equal(status.error, null, status.error?.message);
  assert.ok(await e.store.release(held.lease));
}

/** Source offsets in the target, in target order, read from the provenance headers. */
function copiedOffsets(e: Env): number[] {
  return e.target.records(dst).map((r: MirrorRecord) => lastProvenance(r, HEADER)?.offset ?? -1);
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe("PartitionPump through a clean source leader change (exactly-once)", () => {
  it("a write cut at the lease's end after a leader change: the next holder copies nothing twice (regression)", async () => {
    // Prepare: 10 records of epoch 0 copied and checkpointed; the leader changes cleanly; 100
    // records of epoch 1. The next holder fetches all 100 in one go, and its write is cut at
    // its lease's hard deadline after five groups of ten landed: it checkpoints 60.
    const e = env();
    e.source.append(src, makeRecords(10, 0));
    await copyAll(e, "w1");
    e.source.moveLeader(src);
    e.source.append(src, makeRecords(100, 1));
    e.target.writeGroups = { records: 10, ms: 300 };
    const cut = await claim(e, "w2", 60_000, e.clock.now() + 1_550);
    const status = await pumpFor(e, cut, 100).run();
    assert.equal(status.stopReason, "deadline");
    assert.equal(e.store.get(src)?.checkpoint, 60);
    assert.ok(await e.store.release(cut.lease));
    e.target.writeGroups = null;

    // Act
    await copyAll(e, "w3");

    // Assess
    assert.deepEqual(copiedOffsets(e), range(0, 110));
    assert.deepEqual(e.metrics.lost, [], "a clean leader change is no loss");
    assert.deepEqual(e.logger.at("error"), []);
  });

  it("a recovery pin after a leader change: the holder after it copies nothing twice (regression)", async () => {
    // Prepare: 10 records of epoch 0 copied and checkpointed; the leader changes cleanly; 50
    // records of epoch 1; a holder writes all 50 and dies before its checkpoint.
    const e = env();
    e.source.append(src, makeRecords(10, 0));
    await copyAll(e, "w1");
    e.source.moveLeader(src);
    e.source.append(src, makeRecords(50, 1));
    let writes = 0;
    e.target.hooks.afterWrite = () => {
      writes++;
      return new Promise<void>(() => {}); // killed right after the write landed
    };
    const dies = await claim(e, "w2", 5_000);
    void pumpFor(e, dies, 100).run();
    await until(e.clock, () => writes === 1);
    assert.equal(e.store.get(src)?.checkpoint, 10);
    e.target.hooks = {};
    e.clock.advance(6_000);

    // Act: the successor recovers (finds 10..59 landed) and pins 60; the holder after it resumes.
    await copyAll(e, "w3");
    assert.equal(e.store.get(src)?.checkpoint, 60);
    await copyAll(e, "w4");

    // Assess
    assert.deepEqual(copiedOffsets(e), range(0, 60));
    assert.deepEqual(e.metrics.lost, [], "a clean leader change is no loss");
    assert.deepEqual(e.logger.at("error"), []);
  });

  for (const maxRecords of [500, 100]) {
    it(`a compacted log whose newer epoch lost its first records: no false truncation (fetches of ${maxRecords})`, async () => {
      // Prepare: epoch 0 holds 0..99, epoch 1 began at 100 (Kafka's epoch cache says so), and
      // compaction removed 100..149. Reads see epoch 1 begin at 100 (the gap is its), not at 150.
      const e = env();
      e.source.append(src, makeRecords(100, 0));
      e.source.moveLeader(src);
      e.source.append(src, makeRecords(100, 1));
      e.source.compact(src, 100, 150);
      const held = await claim(e, "w1");

      // Act
      const status = await runUntilCaughtUp(e.clock, pumpFor(e, held, maxRecords));

      // Assess
      assert.equal(status.error, null, status.error?.message);
      assert.deepEqual(copiedOffsets(e), [...range(0, 100), ...range(150, 200)]);
      assert.deepEqual(e.metrics.lost, []);
      assert.equal(e.store.get(src)?.checkpoint, 200);
    });
  }

  it("a checkpoint an older version moved (its epoch left behind) is no truncation (rolling deploy)", async () => {
    // Prepare: a holder of this version stores epoch 0 with checkpoint 100; after a clean leader
    // change an older version copies 100..199 and moves the checkpoint to 200, leaving this
    // version's epoch (stored with 100) as it was.
    const e = env();
    e.source.append(src, makeRecords(100, 0));
    await copyAll(e, "new-1");
    assert.equal(e.store.get(src)?.sourceEpoch, 0);
    e.source.moveLeader(src);
    e.source.append(src, makeRecords(100, 1));
    await copyAll(e, "old-2");
    e.store.put({ ...(e.store.get(src) as Lease), sourceEpoch: 0 }, { sourceEpochAt: 100 });
    e.source.append(src, makeRecords(10, 2));

    // Act
    await copyAll(e, "new-3");

    // Assess
    assert.deepEqual(copiedOffsets(e), range(0, 210));
    assert.deepEqual(e.metrics.lost, []);
  });

  it("a divergence seen while copying that the start-up does not confirm stops the partition instead of looping", async () => {
    // Prepare: at the leader change, OffsetForLeaderEpoch answers once (wrongly) that the old
    // epoch ended at 0; asked again on the start-up it ran, it answers the truth.
    const e = env();
    e.source.append(src, makeRecords(10, 0));
    let calls = 0;
    const real = e.source.endOffsetForLeaderEpoch.bind(e.source);
    e.source.endOffsetForLeaderEpoch = async (tp, epoch) => (calls++ === 0 ? 0 : real(tp, epoch));
    let fetches = 0;
    e.source.hooks.beforeFetch = () => {
      if (++fetches === 2) {
        e.source.moveLeader(src);
        e.source.append(src, makeRecords(5, 1));
      }
    };
    const held = await claim(e, "w1");

    // Act
    const status = await runUntilCaughtUp(e.clock, pumpFor(e, held));

    // Assess
    assert.equal(status.error?.code, "KAFKA_FATAL", status.error?.message);
    assert.ok(fetches < 10, `${fetches} fetches`);
    assert.deepEqual(copiedOffsets(e), range(0, 10));
    assert.deepEqual(e.metrics.lost, []);
  });
});
