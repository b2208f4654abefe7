/**
 * PartitionPump with target.copy "batches" over the in-memory fakes: source batches pass through
 * one to one, and exactly-once comes from fenced writes and the look's matching of our copies
 * (target-tail.ts), without provenance. The leader-change property test runs the same pump
 * through crashes, cut and uncertain writes, handoffs and leader moves.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { MirrorRecord, SourceBatch } from "../../../../lib/core/model.js";
import type { LeaseStore } from "../../../../lib/core/ports.js";
import { HeldLease } from "../../../../lib/core/pump/held-lease.js";
import { PartitionPump } from "../../../../lib/core/pump/partition-pump.js";
import { isReplicatorError, ReplicatorError } from "../../../../lib/errors.js";
import { until } from "../../../helpers/fake-clock.js";
import { makeRecords } from "../../../helpers/fake-cluster.js";
import { storeWith } from "../../../helpers/fake-leases.js";
import { FencedWriter } from "../../../helpers/fenced-writer.js";
import {
  dst,
  PROVENANCE,
  pumpDeps,
  runUntilCaughtUp,
  src,
  srcDstWorld,
} from "../../../helpers/pump-fixture.js";

type World = ReturnType<typeof srcDstWorld>;

async function hold(w: World, owner: string): Promise<HeldLease> {
  await w.store.ensure([src]);
  const claimed = await w.store.claim(
    w.store.get(src) as Parameters<LeaseStore["claim"]>[0],
    owner,
    w.clock.now() + 60_000,
  );
  assert.ok(claimed);
  return new HeldLease(claimed, { source: src, target: dst }, Number.MAX_SAFE_INTEGER);
}

function pump(
  w: World,
  held: HeldLease,
  fenced = true,
  maxRecords = 10,
  store?: LeaseStore,
  readers: { readonly source?: World["source"]; readonly tail?: World["target"] } = {},
): PartitionPump {
  return new PartitionPump(
    {
      ...pumpDeps(w),
      ...(store === undefined ? {} : { store }),
      ...(readers.source === undefined ? {} : { source: readers.source }),
      target: fenced ? new FencedWriter(w.target) : w.target,
      targetTail: { reader: readers.tail ?? w.target, admin: w.target, logger: w.logger, metrics: w.metrics },
    },
    {
      batch: { maxRecords, maxBytes: 1 << 20, maxWaitMs: 500 },
      startFrom: "earliest",
      writeSafetyMarginMs: 1_000,
      provenance: PROVENANCE,
      copy: "batches",
    },
    held,
  );
}

/**
 * Three source records copied past the checkpoint by a holder that then died, and the source
 * batch compacted under the copy since; the lease expired.
 */
async function copiedThenCompacted(): Promise<World> {
  const w = srcDstWorld();
  w.source.append(src, makeRecords(3, 1));
  const first = await hold(w, "a");
  await w.store.checkpoint(first.lease, 0, w.clock.now(), 0, { topicId: null, leaderEpoch: 0 });
  const writer = new FencedWriter(w.target);
  await writer.fence(dst);
  const source = await w.source.fetchBatches(src, 0, { maxRecords: 10, maxBytes: 1 << 20, maxWaitMs: 0 });
  await writer.write(dst, source.batches);
  w.source.compact(src, 0, 1);
  w.clock.advance(120_000);
  return w;
}

const values = (records: readonly MirrorRecord[]) => records.map((r) => r.value?.toString("hex"));

/**
 * Kafka gives the transactional id a new producer id (epoch exhausted, or expired unused) twice:
 * at the fence after the first holder's uncertain second write, and at the next holder's. That
 * write's retry lands under the new id and the holder dies before its checkpoint; the second
 * holder can tell those copies for ours only by the ids the lease lists. `lostAnswer`: the
 * checkpoint after the first write is stored, but its answer lost (deferred). `gapAtEnd`: the
 * first fetch ends in compacted offsets, so that checkpoint lies past its last record.
 */
async function newIdAfterUncertainWrite(options: {
  lostAnswer: boolean;
  gapAtEnd?: boolean;
}): Promise<World> {
  const w = srcDstWorld();
  for (const key of [1, 2]) w.source.append(src, makeRecords(5, key));
  if (options.gapAtEnd === true) w.source.compact(src, 3, 5);
  let lost = !options.lostAnswer;
  const store = storeWith(w.store, {
    checkpoint: async (...args) => {
      const stored = await w.store.checkpoint(...args);
      if (lost || args[1] === 0) return stored;
      lost = true;
      throw new ReplicatorError("LEASE_STORE_UNAVAILABLE", "the answer was lost (test)");
    },
  });
  let writes = 0;
  let frozen = false;
  w.target.hooks = {
    beforeWrite: () => {
      if (++writes !== 2) return;
      w.target.newProducerIdAtNextFence = true;
      throw new ReplicatorError("KAFKA_RETRIABLE", "timed out"); // its outcome unknown
    },
    afterWrite: () => {
      if (writes !== 3) return;
      frozen = true; // the retry under the new id landed; the holder dies before its checkpoint
      return new Promise<void>(() => {});
    },
  };
  const first = pump(w, await hold(w, "a"), true, 5, store);
  void first.run();
  await until(w.clock, () => frozen || first.status.stopReason !== null);
  assert.ok(frozen, `the first holder stopped (${first.status.stopReason}) before its last write`);
  w.target.hooks = {};
  w.target.newProducerIdAtNextFence = true;
  w.clock.advance(120_000);
  const status = await runUntilCaughtUp(w.clock, pump(w, await hold(w, "b"), true, 5));
  assert.equal(status.error, null, status.error?.message);
  return w;
}

describe("PartitionPump, target.copy batches", () => {
  it("writes each source batch as one target batch, records unchanged and without a provenance header", async () => {
    const w = srcDstWorld();
    w.source.append(src, makeRecords(4, 1));
    w.source.append(src, makeRecords(3, 2));
    const status = await runUntilCaughtUp(w.clock, pump(w, await hold(w, "a")));
    assert.equal(status.error, null);
    const copies = w.target.records(dst);
    assert.deepEqual(values(copies), values(w.source.records(src)));
    assert.deepEqual(copies[0]?.headers, w.source.records(src)[0]?.headers);
    assert.deepEqual(
      (await w.target.fetchBatches(dst, 0, { maxRecords: 100, maxBytes: 1 << 20, maxWaitMs: 0 })).batches.map(
        (b) => b.count,
      ),
      [4, 3],
    );
    assert.equal(w.store.get(src)?.checkpoint, 7);
  });

  it("a holder that finds copies of ours past the checkpoint skips them, and another producer's batches in between", async () => {
    const w = srcDstWorld();
    w.source.append(src, makeRecords(5, 1));
    w.source.append(src, makeRecords(5, 2));
    w.source.append(src, makeRecords(5, 3));
    const first = await hold(w, "a");
    // The first holder's copies land, then it dies before any checkpoint past 0 is stored.
    const writer = new FencedWriter(w.target);
    await writer.fence(dst);
    const source = await w.source.fetchBatches(src, 0, { maxRecords: 10, maxBytes: 1 << 20, maxWaitMs: 0 });
    await w.store.checkpoint(first.lease, 0, w.clock.now(), 0, { topicId: null, leaderEpoch: 0 });
    await writer.write(dst, source.batches);
    w.target.append(dst, makeRecords(2, 9)); // another producer's batch
    w.clock.advance(120_000);
    const status = await runUntilCaughtUp(w.clock, pump(w, await hold(w, "b")));
    assert.equal(status.error, null);
    const ours = w.target.records(dst).filter((r) => r.key?.[1] !== 9);
    assert.deepEqual(values(ours), values(w.source.records(src)));
    assert.ok(
      w.logger.entries.some((e) => e.message.startsWith("another producer writes to the target partition")),
    );
    assert.deepEqual(w.metrics.otherWriter, [{ topic: "src", partition: 0, targetTopic: "dst", batches: 1 }]);
  });

  it("a copy the source batch no longer matches stops the partition, writing nothing", async () => {
    const w = await copiedThenCompacted();
    const status = await runUntilCaughtUp(w.clock, pump(w, await hold(w, "b")));
    assert.ok(isReplicatorError(status.error, "TARGET_COPY_MISMATCH"), status.error?.message);
    assert.equal(status.error.retryable, false);
    assert.equal(w.target.records(dst).length, 3);
  });

  it("a source batch that fails its CRC when the look matches it stops the partition as CORRUPT_BATCH, whatever its count says", async () => {
    // Prepare: the source batch comes with another record count (compaction standing in for a
    // changed header) and a CRC that fails when the reader checks it (KafkaPartitionReader's
    // contentCrc, CrcCheck "write").
    const w = await copiedThenCompacted();
    const fromSource = new WeakSet<SourceBatch>();
    const sourceReader = delegate(w.source, {
      fetchBatches: async (...args: Parameters<typeof w.source.fetchBatches>) => {
        const fetched = await w.source.fetchBatches(...args);
        for (const b of fetched.batches) fromSource.add(b);
        return fetched;
      },
    });
    const tailReader = delegate(w.target, {
      contentCrc: async (b: SourceBatch) => {
        if (fromSource.has(b)) throw new ReplicatorError("CORRUPT_BATCH", "record batch CRC mismatch");
        return w.target.contentCrc(b);
      },
    });

    // Act
    const readers = { source: sourceReader, tail: tailReader };
    const status = await runUntilCaughtUp(w.clock, pump(w, await hold(w, "b"), true, 10, undefined, readers));

    // Assess
    assert.ok(isReplicatorError(status.error, "CORRUPT_BATCH"), status.error?.message);
    assert.equal(w.target.records(dst).length, 3);
  });

  it("copies of records retention deleted since, past a clean leader change: stopped once, not a loop", {
    timeout: 20_000,
  }, async () => {
    const w = srcDstWorld();
    w.source.append(src, makeRecords(5, 1)); // 0..4, epoch 0
    const first = await hold(w, "a");
    await w.store.checkpoint(first.lease, 0, w.clock.now(), 0, { topicId: null, leaderEpoch: 0 });
    const writer = new FencedWriter(w.target);
    await writer.fence(dst);
    const source = await w.source.fetchBatches(src, 0, { maxRecords: 10, maxBytes: 1 << 20, maxWaitMs: 0 });
    await writer.write(dst, source.batches); // landed, never checkpointed: the holder died
    w.source.append(src, makeRecords(5, 2)); // 5..9
    w.source.moveLeader(src); // epoch 1 from 10: clean
    w.source.append(src, makeRecords(10, 3)); // 10..19
    w.source.deleteBefore(src, 15);
    w.clock.advance(120_000);

    const status = await runUntilCaughtUp(w.clock, pump(w, await hold(w, "b")));

    // The copies cover offsets from 0 on, the source now starts at 15: which records they hold
    // nobody can tell, so the partition stops (README, Copy modes) rather than guess; before,
    // the new epoch looked like a truncation under the copies, and the pump went round for ever.
    assert.ok(isReplicatorError(status.error, "TARGET_COPY_MISMATCH"), status.error?.message);
    assert.deepEqual(w.metrics.lost, [{ topic: "src", partition: 0, from: 0, to: 15 }]);
    assert.equal(w.target.records(dst).length, 5);
  });

  it("a new producer id from the fence after an uncertain write is listed before anything is written under it", async () => {
    const w = await newIdAfterUncertainWrite({ lostAnswer: false });
    assert.deepEqual(values(w.target.records(dst)), values(w.source.records(src)));
    // The first holder's two ids (7, then 1007 from its second fence) and the second's.
    assert.deepEqual(w.store.get(src)?.producerIds, [7n, 1007n, 2007n]);
  });

  it("a new id is listed also when the last checkpoint was stored but its answer lost", async () => {
    // The write that lists the id finds that checkpoint stored, which reads as its own success
    // (loss.ts), though the item lacks the id: before, the id went unlisted, and its copy twice.
    const w = await newIdAfterUncertainWrite({ lostAnswer: true });
    assert.deepEqual(values(w.target.records(dst)), values(w.source.records(src)));
    assert.deepEqual(w.store.get(src)?.producerIds, [7n, 1007n, 2007n]);
  });

  it("a new id is listed when that lost checkpoint lies past the last record (a compaction gap)", async () => {
    // Before, the id was stored with a checkpoint after the last record landed, behind the stored
    // one: LEASE_LOST "checkpoint-ahead", and the partition stopped.
    const w = await newIdAfterUncertainWrite({ lostAnswer: true, gapAtEnd: true });
    assert.deepEqual(values(w.target.records(dst)), values(w.source.records(src)));
    assert.deepEqual(w.store.get(src)?.producerIds, [7n, 1007n, 2007n]);
  });

  it("refuses to run without fenced writes", async () => {
    const w = srcDstWorld();
    const held = await hold(w, "a");
    assert.throws(() => pump(w, held, false), /target\.fencing "transactional"/);
  });
});

/** `target` with some methods replaced; the rest called on `target` itself (its private fields). */
function delegate<T extends object>(target: T, overrides: Partial<T>): T {
  return new Proxy(target, {
    get: (t, name) => {
      if (name in overrides) return overrides[name as keyof T];
      const value = Reflect.get(t, name, t);
      return typeof value === "function" ? value.bind(t) : value;
    },
  });
}
