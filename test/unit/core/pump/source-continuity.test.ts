/**
 * PartitionPump resuming over a source log that diverged under its checkpoint (topic re-created,
 * log truncated by an unclean leader election), over the in-memory fakes: nothing of the new log
 * is skipped, and what the checkpoint no longer matches is reported as lost.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { MirrorRecord } from "../../../../lib/core/model.js";
import type { Lease } from "../../../../lib/core/ports.js";
import { lastProvenance } from "../../../../lib/core/provenance.js";
import { HeldLease } from "../../../../lib/core/pump/held-lease.js";
import { PartitionPump, type PumpSettings } from "../../../../lib/core/pump/partition-pump.js";
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

async function claim(e: Env, owner: string): Promise<HeldLease> {
  await e.store.ensure([src]);
  const observed = e.store.get(src) as Lease;
  const claimed = await e.store.claim(observed, owner, e.clock.now() + 60_000);
  assert.ok(claimed, `${owner} could not claim`);
  return new HeldLease(claimed, { source: src, target: dst }, Number.MAX_SAFE_INTEGER);
}

function settings(exactlyOnce: boolean): PumpSettings {
  return {
    batch: { maxRecords: 10, maxBytes: 1 << 20, maxWaitMs: 500 },
    startFrom: "earliest",
    writeSafetyMarginMs: 1_000,
    retry: { initialMs: 50, maxMs: 1_000 },
    ...(exactlyOnce ? { provenance: PROVENANCE } : {}),
  };
}

function pump(e: Env, held: HeldLease, exactlyOnce: boolean): PartitionPump {
  const deps = exactlyOnce
    ? { ...pumpDeps(e), targetTail: { reader: e.target, admin: e.target, logger: e.logger } }
    : pumpDeps(e);
  return new PartitionPump(deps, settings(exactlyOnce), held);
}

/** One holder takes the lease, copies until caught up, and gives the lease back. */
async function copyOnce(e: Env, owner: string, exactlyOnce: boolean): Promise<void> {
  const held = await claim(e, owner);
  const status = await runUntilCaughtUp(e.clock, pump(e, held, exactlyOnce));
  assert.equal(status.error, null, status.error?.message);
  assert.ok(await e.store.release(held.lease));
}

const values = (records: readonly MirrorRecord[]) => records.map((r) => r.value?.toString("hex"));

for (const exactlyOnce of [false, true]) {
  const mode = exactlyOnce ? "exactly-once" : "at-least-once";

  describe(`PartitionPump over a diverged source log (${mode})`, () => {
    it("restarts a re-created topic at its log start, copies all of it and counts the loss", async () => {
      // Prepare: 20 records copied and checkpointed with the topic's id
      const e = env();
      e.source.append(src, makeRecords(20, 0));
      await copyOnce(e, "w1", exactlyOnce);
      const oldId = e.source.topicId("src");
      assert.equal(e.store.get(src)?.sourceTopicId, oldId);
      e.source.recreateTopic("src", 1);
      e.source.append(src, makeRecords(5, 100));
      const fresh = e.source.records(src);

      // Act
      await copyOnce(e, "w2", exactlyOnce);

      // Assess: the new log's five records follow the old twenty; nothing skipped
      const copied = e.target.records(dst);
      assert.equal(copied.length, 25);
      assert.deepEqual(values(copied.slice(20)), values(fresh));
      const lease = e.store.get(src);
      assert.equal(lease?.checkpoint, 5);
      assert.equal(lease?.sourceTopicId, e.source.topicId("src"));
      assert.notEqual(lease?.sourceTopicId, oldId);
      assert.deepEqual(e.metrics.lost, [{ topic: "src", partition: 0, from: 0, to: 20 }]);
      assert.equal(e.logger.at("error").length, 1);
      assert.match(e.logger.at("error")[0]?.message ?? "", /re-created/);
    });

    it("resumes a truncated log where it diverged, copies the new records and counts the loss", async () => {
      // Prepare: 20 records copied in epoch 0; an unclean election keeps 12 and bumps the epoch
      const e = env();
      e.source.append(src, makeRecords(20, 0));
      await copyOnce(e, "w1", exactlyOnce);
      assert.equal(e.store.get(src)?.sourceEpoch, 0);
      e.source.truncate(src, 12);
      e.source.append(src, makeRecords(6, 100));
      const diverged = e.source.records(src).slice(12);

      // Act
      await copyOnce(e, "w2", exactlyOnce);

      // Assess: offsets 12..17 now hold different records, and they are copied too
      const copied = e.target.records(dst);
      assert.equal(copied.length, 26);
      assert.deepEqual(values(copied.slice(20)), values(diverged));
      if (exactlyOnce) {
        assert.deepEqual(
          copied.slice(20).map((r) => lastProvenance(r, HEADER)?.offset),
          [12, 13, 14, 15, 16, 17],
        );
      }
      const lease = e.store.get(src);
      assert.equal(lease?.checkpoint, 18);
      assert.equal(lease?.sourceEpoch, 1);
      assert.deepEqual(e.metrics.lost, [{ topic: "src", partition: 0, from: 12, to: 20 }]);
      assert.match(e.logger.at("error")[0]?.message ?? "", /truncated/);
    });

    it("resumes an old lease item without topic id or epoch at its checkpoint and then stores them", async () => {
      // Prepare: an item from before these fields existed, checkpoint 20
      const e = env();
      e.source.append(src, makeRecords(30, 0));
      await e.store.ensure([src]);
      e.store.put({ ...(e.store.get(src) as Lease), checkpoint: 20 });

      // Act
      await copyOnce(e, "w1", exactlyOnce);

      // Assess
      assert.deepEqual(values(e.target.records(dst)), values(e.source.records(src).slice(20)));
      assert.deepEqual(e.metrics.lost, []);
      const lease = e.store.get(src);
      assert.equal(lease?.checkpoint, 30);
      assert.equal(lease?.sourceTopicId, e.source.topicId("src"));
      assert.equal(lease?.sourceEpoch, 0);
    });
  });
}

describe("PartitionPump over a re-created topic, exactly-once", () => {
  it("does not take provenance written before the reset for records of the new log", async () => {
    // Prepare: the stored target position lags behind what landed (any earlier position is a
    // valid one, e.g. after a switch from at-least-once), so recovery reads offsets 0..19 of the
    // old log back from the target
    const e = env();
    e.source.append(src, makeRecords(20, 0));
    await copyOnce(e, "w1", true);
    e.store.put({ ...(e.store.get(src) as Lease), targetOffset: 0 });
    e.source.recreateTopic("src", 1);
    e.source.append(src, makeRecords(5, 100));

    // Act
    await copyOnce(e, "w2", true);

    // Assess: the new log's offsets 0..4 are copied although 0..19 of the old one sit in the target
    assert.deepEqual(
      e.target.records(dst).map((r) => lastProvenance(r, HEADER)?.offset),
      [...Array.from({ length: 20 }, (_, i) => i), 0, 1, 2, 3, 4],
    );
    assert.equal(e.store.get(src)?.targetOffset, 25);
  });
});

describe("PartitionPump over a source log that did not diverge", () => {
  it("a leader change without truncation moves nothing back and loses nothing", async () => {
    const e = env();
    e.source.append(src, makeRecords(20, 0));
    await copyOnce(e, "w1", true);
    // A clean election: the epoch bumps, the log is kept whole.
    e.source.truncate(src, 20);
    e.source.append(src, makeRecords(3, 100));

    await copyOnce(e, "w2", true);

    assert.equal(e.target.records(dst).length, 23);
    assert.deepEqual(e.metrics.lost, []);
    assert.equal(e.store.get(src)?.checkpoint, 23);
  });
});

// Regression, found by the chaos run on real Kafka: a worker frozen while taking a partition woke
// after the next holder had copied records of a newer leader epoch past its checkpoint. Its look
// at the target found those copies; measured against its stale checkpoint (older epoch, which
// ends where the newer one begins) they looked like an unclean truncation, and it reported ten
// records lost before its checkpoint reset was refused. Nothing had been lost.
describe("PartitionPump of a holder whose lease was taken while it started, exactly-once", () => {
  it("reports no loss for the next holder's copies of a newer epoch", async () => {
    // Prepare: 20 records checkpointed in epoch 0; w1 takes the partition and stalls
    const e = env();
    e.source.append(src, makeRecords(20, 0));
    await copyOnce(e, "w1", true);
    const stale = await claim(e, "w2");
    // Its lease runs out meanwhile; a clean election (epoch 1) and w3 copies 20..22 of it.
    e.store.put({ ...(e.store.get(src) as Lease), expiresAt: e.clock.now() - 1 });
    e.source.truncate(src, 20);
    e.source.append(src, makeRecords(3, 100));
    await copyOnce(e, "w3", true);
    assert.equal(e.store.get(src)?.sourceEpoch, 1);

    // Act: w2 wakes and starts on its stale view (checkpoint 20, epoch 0)
    const status = await runUntilCaughtUp(e.clock, pump(e, stale, true));

    // Assess: it stops without writing, and neither reports nor logs a loss
    assert.notEqual(status.stopReason, null);
    assert.equal(e.target.records(dst).length, 23);
    assert.deepEqual(e.metrics.lost, []);
    assert.equal(e.logger.at("error").filter((l) => /truncated/.test(l.message)).length, 0);
    assert.equal(e.store.get(src)?.checkpoint, 23);
  });
});
