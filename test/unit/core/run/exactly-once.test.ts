/**
 * PartitionPump in exactly-once mode (provenance on), over the in-memory fakes: crashes and
 * uncertain writes between the target's ack and the checkpoint never copy a record twice.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { MirrorRecord } from "../../../../lib/core/model.js";
import type { Lease } from "../../../../lib/core/ports.js";
import { lastProvenance, type ProvenanceSettings, withProvenance } from "../../../../lib/core/provenance.js";
import { HeldLease } from "../../../../lib/core/pump/held-lease.js";
import { PartitionPump } from "../../../../lib/core/pump/partition-pump.js";
import { ReplicatorError } from "../../../../lib/errors.js";
import { until } from "../../../helpers/fake-clock.js";
import { makeRecords } from "../../../helpers/fake-cluster.js";
import { storeWith } from "../../../helpers/fake-leases.js";
import {
  dst,
  HEADER,
  PROVENANCE,
  pumpDeps,
  runUntilCaughtUp,
  src,
  srcDstWorld,
} from "../../../helpers/pump-fixture.js";

const FAR = Number.MAX_SAFE_INTEGER;

const env = srcDstWorld;
type Env = ReturnType<typeof env>;

/** Replaces the target's fence with one that notes when it was called. */
function recordFences(e: Env): number[] {
  const fences: number[] = [];
  e.target.fence = async () => {
    fences.push(e.clock.now());
  };
  return fences;
}

async function claim(e: Env, owner: string, expiresIn = 60_000): Promise<HeldLease> {
  await e.store.ensure([src]);
  const observed = e.store.get(src) as Lease;
  const claimed = await e.store.claim(observed, owner, e.clock.now() + expiresIn);
  assert.ok(claimed, `${owner} could not claim`);
  return new HeldLease(claimed, { source: src, target: dst }, FAR);
}

function pumpFor(e: Env, held: HeldLease, maxRecords = 10, checkpointIntervalMs = 0): PartitionPump {
  return new PartitionPump(
    { ...pumpDeps(e), targetTail: { reader: e.target, admin: e.target, logger: e.logger } },
    {
      batch: { maxRecords, maxBytes: 1 << 20, maxWaitMs: 500 },
      startFrom: "earliest",
      writeSafetyMarginMs: 1_000,
      retry: { initialMs: 50, maxMs: 1_000 },
      provenance: PROVENANCE,
      checkpointIntervalMs,
    },
    held,
  );
}

async function copyUntilCaughtUp(e: Env, held: HeldLease, maxRecords?: number): Promise<void> {
  const pump = pumpFor(e, held, maxRecords);
  const status = await runUntilCaughtUp(e.clock, pump);
  assert.equal(status.error, null);
}

/** Source offsets in the target, in target order, read from the provenance headers. */
function copiedOffsets(e: Env): number[] {
  return e.target.records(dst).map((r: MirrorRecord) => lastProvenance(r, HEADER)?.offset ?? -1);
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe("PartitionPump, exactly-once", () => {
  it("a write that landed but was not acknowledged is not written again", async () => {
    const e = env();
    e.source.append(src, makeRecords(30, 0));
    let writes = 0;
    e.target.hooks.afterWrite = () => {
      writes++;
      if (writes === 2) throw new ReplicatorError("KAFKA_RETRIABLE", "request timed out");
    };

    await copyUntilCaughtUp(e, await claim(e, "w1"));

    assert.deepEqual(copiedOffsets(e), range(30));
    assert.equal(e.store.get(src)?.checkpoint, 30);
  });

  it("a look at the target that fails part way is taken again before the next write", async () => {
    const e = env();
    e.target.append(dst, makeRecords(40, 5)); // somebody else's records: the look takes a few fetches
    e.source.append(src, makeRecords(30, 0));
    let failedWrite = false;
    let failedLook = false;
    e.target.hooks.afterWrite = () => {
      if (!failedWrite) {
        failedWrite = true;
        throw new ReplicatorError("KAFKA_RETRIABLE", "request timed out"); // but it landed
      }
    };
    e.target.hooks.beforeFetch = (_tp, offset) => {
      // The look after the uncertain write breaks off once it has read past the foreign records.
      if (failedWrite && !failedLook && offset >= 40) {
        failedLook = true;
        throw new ReplicatorError("KAFKA_RETRIABLE", "target broker went away");
      }
    };

    await copyUntilCaughtUp(e, await claim(e, "w1"), 5);

    assert.ok(failedLook, "the look broke off");
    assert.deepEqual(copiedOffsets(e).slice(40), range(30));
  });

  it("a stop right after the look that found part of an uncertain write leaves no duplicate for the next holder (regression)", async () => {
    // Checkpoints coalesced, so the checkpoint lags the pump; the third write (source 20..29)
    // lands its first five records, then fails; the look after it finds them and moves the
    // target position past them; the pump is told to stop then (a handoff, a drain, the end).
    // The checkpoint stored with that position must be past them too.
    const e = env();
    e.source.append(src, makeRecords(30, 0));
    let writes = 0;
    let uncertain = false;
    e.target.hooks.beforeWrite = (tp, records) => {
      if (++writes !== 3) return;
      e.target.append(tp, records.slice(0, 5));
      uncertain = true;
      throw new ReplicatorError("KAFKA_RETRIABLE", "broker went away after the first batch");
    };
    const first = await claim(e, "w1", 5_000);
    e.target.hooks.beforeFetch = () => {
      if (uncertain) first.stop();
    };
    const status = await pumpFor(e, first, 10, 60_000).run();
    assert.equal(status.stopReason, "stopped");
    const lease = e.store.get(src) as Lease;
    const stored = `checkpoint ${lease.checkpoint}, position ${lease.targetOffset}`;

    e.target.hooks = {};
    e.clock.advance(6_000);
    await copyUntilCaughtUp(e, await claim(e, "w2"));

    assert.deepEqual(copiedOffsets(e), range(30), `the first holder stored ${stored}`);
  });

  it("a write of which only the first batch landed sends only the rest", async () => {
    const e = env();
    e.source.append(src, makeRecords(10, 0));
    let writes = 0;
    e.target.hooks.beforeWrite = (tp, records) => {
      writes++;
      if (writes === 1) {
        e.target.append(tp, records.slice(0, 4));
        throw new ReplicatorError("KAFKA_RETRIABLE", "broker went away after the first batch");
      }
    };

    await copyUntilCaughtUp(e, await claim(e, "w1"));

    assert.deepEqual(copiedOffsets(e), range(10));
  });

  it("a holder killed between the target's ack and its checkpoint: the next holder resumes after what landed", async () => {
    const e = env();
    e.source.append(src, makeRecords(50, 0));
    let writes = 0;
    // The first holder dies right after its third write landed: its checkpoint never happens.
    e.target.hooks.afterWrite = () => {
      writes++;
      if (writes === 3) return new Promise<void>(() => {});
    };
    const first = await claim(e, "w1", 5_000);
    void pumpFor(e, first).run();
    await until(e.clock, () => writes === 3);
    assert.equal(e.store.get(src)?.checkpoint, 20);
    e.target.hooks.afterWrite = undefined;

    e.clock.advance(6_000);
    await copyUntilCaughtUp(e, await claim(e, "w2"));

    assert.deepEqual(copiedOffsets(e), range(50));
    assert.ok(e.logger.at("info").some((l) => l.message.startsWith("records of an unfinished write")));
  });

  it("records that came from the target cluster are not copied back, and their offsets are checkpointed", async () => {
    const e = env();
    const fromB: ProvenanceSettings = { header: HEADER, sourceAlias: "B", targetAlias: "A" };
    const native = makeRecords(4, 1);
    e.source.append(src, native.slice(0, 2));
    // Two records that kafka-mirror copied from B into A earlier.
    for (const r of makeRecords(2, 9)) e.source.append(src, [withProvenance({ ...r, offset: 0 }, fromB, 0)]);
    e.source.append(src, native.slice(2));

    await copyUntilCaughtUp(e, await claim(e, "w1"));

    assert.deepEqual(copiedOffsets(e), [0, 1, 4, 5]);
    assert.equal(e.store.get(src)?.checkpoint, 6);
  });

  it("stores a target position with every checkpoint", async () => {
    const e = env();
    e.target.append(dst, makeRecords(7, 3)); // somebody else's records already in the target
    e.source.append(src, makeRecords(25, 0));

    await copyUntilCaughtUp(e, await claim(e, "w1"));

    const lease = e.store.get(src);
    assert.equal(lease?.checkpoint, 25);
    assert.equal(lease?.targetOffset, 7 + 25);
  });

  it("looks at the target end once while every write is acknowledged, and again after one is not", async () => {
    const e = env();
    e.source.append(src, makeRecords(50, 0));
    const looked: number[] = [];
    const admin = e.target;
    const listOffsets = admin.listOffsets.bind(admin);
    admin.listOffsets = (topic, partitions) => {
      looked.push(e.target.writes);
      return listOffsets(topic, partitions);
    };
    e.target.hooks.afterWrite = () => {
      if (e.target.writes === 3) throw new ReplicatorError("KAFKA_RETRIABLE", "request timed out");
    };

    await copyUntilCaughtUp(e, await claim(e, "w1"));

    // Once when the partition is taken, once before the write after the unacknowledged third.
    assert.deepEqual(looked, [0, 3]);
    assert.deepEqual(copiedOffsets(e), range(50));
  });

  it("writes the next batch while the last one's checkpoint is under way, each with a position that holds", async () => {
    const e = env();
    e.target.append(dst, makeRecords(3, 7)); // somebody else's records first
    e.source.append(src, makeRecords(60, 0));
    const stored: { checkpoint: number; position: number | undefined }[] = [];
    let overlapped = 0;
    let checkpointsInFlight = 0;
    const store = e.store;
    const slowStore = storeWith(store, {
      checkpoint: async (held: Lease, next: number, now: number, position?: number) => {
        stored.push({ checkpoint: next, position });
        checkpointsInFlight++;
        try {
          await e.clock.sleep(300);
          return await store.checkpoint(held, next, now, position);
        } finally {
          checkpointsInFlight--;
        }
      },
    });
    e.target.hooks.beforeWrite = () => {
      if (checkpointsInFlight > 0) overlapped++;
    };

    const held = await claim(e, "w1");
    const pump = pumpFor({ ...e, store: slowStore } as Env, held);
    assert.equal((await runUntilCaughtUp(e.clock, pump)).error, null);

    assert.ok(overlapped >= 4, `writes overlapped with a checkpoint: ${overlapped}`);
    assert.deepEqual(copiedOffsets(e).slice(3), range(60));
    assert.equal(e.store.get(src)?.checkpoint, 60);
    // The invariant of target-tail.ts for every pair stored: whatever was copied from source
    // offset C on sits at or after target offset T.
    const targetOffsets = e.target.records(dst).slice(3);
    for (const { checkpoint, position } of stored) {
      assert.ok(position !== undefined);
      for (const r of targetOffsets) {
        const from = lastProvenance(r, HEADER)?.offset ?? -1;
        if (from >= checkpoint)
          assert.ok(r.offset >= position, `${checkpoint}/${position} vs ${from}@${r.offset}`);
      }
    }
  });

  // Regression: a worker frozen mid-write woke past its lease with the write uncertain and, on
  // its retry, fenced the partition before looking at its lease, bumping the epoch of the worker
  // that had taken over (aborting that worker's open transaction and stopping it as fenced).
  it("a stop while the start's pin waits for the lease store ends the term stopped, not in error", async () => {
    // Prepare: a fresh lease (no target position yet), so the pump must pin before writing; the
    // store is down, so the pin waits and retries.
    const e = env();
    e.source.append(src, makeRecords(5, 0));
    const held = await claim(e, "w1");
    e.store.unavailable = true;
    const pump = pumpFor(e, held);

    // Act: the worker winds down (or a handoff is asked for) while the pin is still retrying.
    const running = pump.run();
    await until(e.clock, () => e.clock.now() >= 500);
    held.stop();
    const status = await running;

    // Assess: an ordinary stop, so the worker releases or hands over the lease at once.
    assert.equal(status.error, null, `ended in error: ${status.error?.code}`);
    assert.equal(status.stopReason, "stopped");
    assert.deepEqual(copiedOffsets(e), []);
  });

  it("a holder whose uncertain write outlived its lease does not fence the partition again", async () => {
    // Prepare
    const e = env();
    e.source.append(src, makeRecords(30, 0));
    const fences = recordFences(e);
    const held = await claim(e, "w1", 10_000);
    e.target.hooks.afterWrite = () => {
      if (e.target.writes !== 2) return;
      e.clock.advance(20_000); // frozen past the lease's expiry, then the answer is lost
      throw new ReplicatorError("KAFKA_RETRIABLE", "request timed out");
    };

    // Act
    const status = await runUntilCaughtUp(e.clock, pumpFor(e, held));

    // Assess
    assert.equal(fences.length, 1, `fenced at ${fences.join(", ")}`);
    assert.equal(status.stopReason, "lease-expired");
    assert.deepEqual(copiedOffsets(e), range(20));
  });

  // Regression: a worker frozen between its claim and its pump's start (GC, SIGSTOP) woke past
  // its lease and fenced the partition first thing, bumping the epoch of the worker that had
  // taken over meanwhile (aborting its open transaction and stopping it as fenced).
  it("a holder whose lease ran out before its pump started does not fence the partition", async () => {
    // Prepare
    const e = env();
    e.source.append(src, makeRecords(30, 0));
    const fences = recordFences(e);
    const held = await claim(e, "w1", 10_000);
    e.clock.advance(20_000);

    // Act
    const status = await runUntilCaughtUp(e.clock, pumpFor(e, held));

    // Assess
    assert.deepEqual(fences, []);
    assert.equal(status.stopReason, "lease-expired");
    assert.deepEqual(copiedOffsets(e), []);
  });

  it("fences with the lease's expiry as the deadline, so no fence can outlast the lease", async () => {
    // Prepare
    const e = env();
    e.source.append(src, makeRecords(5, 0));
    const deadlines: number[] = [];
    e.target.fence = async (_tp, deadline) => {
      deadlines.push(deadline?.() ?? Number.POSITIVE_INFINITY);
    };
    const held = await claim(e, "w1", 10_000);

    // Act
    await runUntilCaughtUp(e.clock, pumpFor(e, held));

    // Assess
    assert.deepEqual(deadlines, [held.lease.expiresAt]);
  });
});
