import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { MirrorRecord, TopicPartition } from "../../../../lib/core/model.js";
import { HeldLease } from "../../../../lib/core/pump/held-lease.js";
import { PartitionPump, type PumpDeps, type PumpSettings } from "../../../../lib/core/pump/partition-pump.js";
import { ReadAheadBudget } from "../../../../lib/core/pump/read-ahead.js";
import { ReplicatorError } from "../../../../lib/errors.js";
import { until } from "../../../helpers/fake-clock.js";
import { makeRecords } from "../../../helpers/fake-cluster.js";
import { inMemoryWorld, pumpDeps, runUntilCaughtUp } from "../../../helpers/pump-fixture.js";

const FAR = Number.MAX_SAFE_INTEGER;

function env(partitions = 1) {
  const world = inMemoryWorld();
  world.source.createTopic("src", partitions);
  world.target.createTopic("dst", partitions);
  return world;
}
type Env = ReturnType<typeof env>;

const src = (partition: number): TopicPartition => ({ topic: "src", partition });
const dst = (partition: number): TopicPartition => ({ topic: "dst", partition });

async function hold(
  e: Env,
  partition: number,
  options: { checkpoint?: number; sourceEpoch?: number; expiresIn?: number; hardDeadline?: number } = {},
): Promise<HeldLease> {
  await e.store.ensure([src(partition)]);
  const free = e.store.get(src(partition));
  assert.ok(free);
  if (options.checkpoint !== undefined)
    e.store.put({ ...free, checkpoint: options.checkpoint, sourceEpoch: options.sourceEpoch ?? null });
  const observed = e.store.get(src(partition));
  assert.ok(observed);
  const claimed = await e.store.claim(observed, "me", e.clock.now() + (options.expiresIn ?? 600_000));
  assert.ok(claimed);
  return new HeldLease(
    claimed,
    { source: src(partition), target: dst(partition) },
    options.hardDeadline ?? FAR,
  );
}

function pumpFor(
  e: Env,
  held: HeldLease,
  settings: Partial<PumpSettings> = {},
  deps: Partial<PumpDeps> = {},
): PartitionPump {
  return new PartitionPump(
    { ...pumpDeps(e), ...deps },
    {
      batch: { maxRecords: 10, maxBytes: 1 << 20, maxWaitMs: 500 },
      startFrom: "earliest",
      writeSafetyMarginMs: 1_000,
      retry: { initialMs: 50, maxMs: 1_000 },
      ...settings,
    },
    held,
  );
}

const values = (records: readonly MirrorRecord[]) => records.map((r) => r.value);

/** Fetches full at 120 bytes (ten records of makeRecords), as production's are at batch.maxBytes. */
const FULL_AT_TEN = { maxRecords: 10, maxBytes: 120, maxWaitMs: 500 };

/** Partition 0 copied until caught up: each write's records and ms after the start, and the copy's ms. */
async function copyTimed(
  e: Env,
  writeMaxBytes: number,
  options: {
    readonly budgetBytes?: number;
    readonly writeMs?: (records: number) => number;
    readonly batch?: PumpSettings["batch"];
  } = {},
) {
  const started = e.clock.now();
  const writes: [number, number][] = [];
  e.target.hooks.beforeWrite = async (_tp, records) => {
    writes.push([records.length, e.clock.now() - started]);
    if (options.writeMs !== undefined) await e.clock.sleep(options.writeMs(records.length));
  };
  const budget = new ReadAheadBudget(options.budgetBytes ?? 1 << 20);
  const pump = pumpFor(
    e,
    await hold(e, 0),
    { writeMaxBytes, batch: options.batch ?? FULL_AT_TEN },
    { readAheadBudget: budget },
  );
  await runUntilCaughtUp(e.clock, pump);
  return { writes, ms: e.clock.now() - started };
}

describe("PartitionPump", () => {
  it("copies every record in order and checkpoints the log end", async () => {
    // Prepare
    const e = env();
    e.source.append(src(0), makeRecords(35, 0));
    const held = await hold(e, 0);
    const pump = pumpFor(e, held);

    // Act
    const status = await runUntilCaughtUp(e.clock, pump);

    // Assess
    assert.deepEqual(values(e.target.records(dst(0))), values(e.source.records(src(0))));
    assert.deepEqual(e.target.records(dst(0))[7]?.headers, e.source.records(src(0))[7]?.headers);
    assert.equal(e.store.get(src(0))?.checkpoint, 35);
    assert.equal(status.records, 35);
    assert.equal(status.stopReason, "stopped");
    assert.deepEqual(
      e.metrics.batches.map((b) => b.records),
      [10, 10, 10, 5],
    );
    // What the lag, latency and record age of the CLI's metrics are computed from.
    const [first] = e.metrics.batches;
    assert.deepEqual(
      [first?.nextOffset, first?.highWatermark, first?.newestTimestamp, first?.fetchedAt !== undefined],
      [10, 35, e.source.records(src(0))[9]?.timestamp, true],
    );
  });

  it("starts at the log end for startFrom latest and pins that start in the store", async () => {
    const e = env();
    e.source.append(src(0), makeRecords(5, 0));
    const held = await hold(e, 0);
    const pump = pumpFor(e, held, { startFrom: "latest" });

    const running = pump.run();
    await until(e.clock, () => e.store.get(src(0))?.checkpoint === 5);
    e.source.append(src(0), makeRecords(3, 1));
    await until(e.clock, () => pump.status.caughtUp && e.store.get(src(0))?.checkpoint === 8);
    held.stop();
    await running;

    assert.deepEqual(values(e.target.records(dst(0))), values(e.source.records(src(0)).slice(5)));
  });

  it("a broker that answers nothing below its high watermark is asked again only after a wait, not in a spin", async () => {
    // Prepare: for 10 virtual seconds every fetch answers no records and no progress, with the
    // high watermark past the offset asked (a broker quirk: each answer would come at once).
    const e = env();
    e.source.append(src(0), makeRecords(5, 0));
    const real = e.source.fetch.bind(e.source);
    const quirkUntil = e.clock.now() + 10_000;
    let empty = 0;
    e.source.fetch = async (tp, offset, limits) => {
      if (e.clock.now() >= quirkUntil) return real(tp, offset, limits);
      empty++;
      return { records: [], nextOffset: offset, highWatermark: 5, logStartOffset: 0, bytes: 0 };
    };

    // Act
    const status = await runUntilCaughtUp(e.clock, pumpFor(e, await hold(e, 0)));

    // Assess: about one empty answer per maxWaitMs (500 ms), then the copy.
    assert.equal(status.error, null);
    assert.ok(empty <= 10_000 / 500 + 4, `${empty} empty fetches in 10 s`);
    assert.deepEqual(values(e.target.records(dst(0))), values(e.source.records(src(0))));
  });

  it("leaves the checkpoint where it was when a write fails", async () => {
    const e = env();
    e.source.append(src(0), makeRecords(25, 0));
    let writes = 0;
    const checkpointsSeenByWrites: (number | null | undefined)[] = [];
    e.target.hooks.beforeWrite = () => {
      writes++;
      checkpointsSeenByWrites.push(e.store.get(src(0))?.checkpoint);
      if (writes === 2) throw new ReplicatorError("KAFKA_RETRIABLE", "not leader");
      if (writes === 4) throw new ReplicatorError("RECORD_REJECTED", "too large");
    };
    const held = await hold(e, 0);
    const pump = pumpFor(e, held);

    const status = await pump.run();

    // Batch 1 landed; batch 2 failed once (checkpoint still 10), was retried and landed; batch 3 was rejected.
    assert.deepEqual(checkpointsSeenByWrites, [0, 10, 10, 20]);
    assert.equal(e.store.get(src(0))?.checkpoint, 20);
    assert.deepEqual(values(e.target.records(dst(0))), values(e.source.records(src(0)).slice(0, 20)));
    assert.equal(status.stopReason, "error");
    assert.equal(status.error?.code, "RECORD_REJECTED");
    assert.deepEqual(e.metrics.errors, [{ topic: "src", partition: 0, code: "RECORD_REJECTED" }]);
    // The worker logs it (failure-report.ts): it knows whether it said so already this run.
    assert.equal(e.logger.at("error").length, 0);
  });

  it("advances the checkpoint over a fetch that returned only control batches", async () => {
    const e = env();
    e.source.appendNonData(src(0), 4);
    const held = await hold(e, 0);
    const pump = pumpFor(e, held);

    await runUntilCaughtUp(e.clock, pump);

    assert.equal(e.target.writes, 0);
    assert.equal(e.store.get(src(0))?.checkpoint, 4);
  });

  it("resumes at the log start after retention deleted uncopied records, and reports the loss", async () => {
    const e = env();
    e.source.append(src(0), makeRecords(10, 0));
    e.source.deleteBefore(src(0), 4);
    const held = await hold(e, 0, { checkpoint: 1 });
    const pump = pumpFor(e, held);

    await runUntilCaughtUp(e.clock, pump);

    assert.deepEqual(e.metrics.lost, [{ topic: "src", partition: 0, from: 1, to: 4 }]);
    assert.ok(e.logger.at("error").some((l) => l.fields.from === 1 && l.fields.to === 4));
    assert.deepEqual(values(e.target.records(dst(0))), values(e.source.records(src(0))));
    assert.equal(e.target.records(dst(0)).length, 6);
    assert.equal(e.store.get(src(0))?.checkpoint, 10);
  });

  it("stops instead of rewinding when the checkpoint is beyond the log end", async () => {
    const e = env();
    e.source.append(src(0), makeRecords(10, 0));
    const held = await hold(e, 0, { checkpoint: 50 });

    const status = await pumpFor(e, held).run();

    assert.equal(status.stopReason, "error");
    assert.equal(status.error?.code, "OFFSET_OUT_OF_RANGE");
    assert.equal(e.target.writes, 0);
    assert.equal(e.store.get(src(0))?.checkpoint, 50);
    assert.deepEqual(e.metrics.lost, []);
  });

  it("a rejected record stops only its own partition", async () => {
    const e = env(2);
    e.source.append(src(0), makeRecords(30, 0));
    e.source.append(src(1), makeRecords(30, 1));
    e.target.hooks.beforeWrite = (tp) => {
      if (tp.partition === 0) throw new ReplicatorError("RECORD_REJECTED", "policy", { details: { ...tp } });
    };
    const held0 = await hold(e, 0);
    const held1 = await hold(e, 1);
    const pump0 = pumpFor(e, held0);
    const pump1 = pumpFor(e, held1);

    const running = [pump0.run(), pump1.run()];
    await until(e.clock, () => pump1.status.caughtUp);
    held1.stop();
    const [status0, status1] = await Promise.all(running);

    assert.equal(status0?.error?.code, "RECORD_REJECTED");
    assert.equal(status1?.stopReason, "stopped");
    assert.equal(e.target.records(dst(0)).length, 0);
    assert.equal(e.store.get(src(0))?.checkpoint, 0);
    assert.deepEqual(values(e.target.records(dst(1))), values(e.source.records(src(1))));
    // The pump does not release: the failed lease stays with its holder until it expires.
    assert.equal(e.store.get(src(0))?.owner, "me");
  });

  it("a slow partition does not stall another", async () => {
    const e = env(2);
    e.source.append(src(0), makeRecords(50, 0));
    e.source.append(src(1), makeRecords(50, 1));
    e.target.hooks.beforeWrite = async (tp) => {
      if (tp.partition === 0) await e.clock.sleep(10_000);
    };
    const held0 = await hold(e, 0);
    const held1 = await hold(e, 1);
    const pump0 = pumpFor(e, held0);
    const pump1 = pumpFor(e, held1);
    const start = e.clock.now();

    const running = [pump0.run(), pump1.run()];
    await until(e.clock, () => pump1.status.caughtUp);
    const fastDoneAfter = e.clock.now() - start;
    const slowRecords = pump0.status.records;
    held0.stop();
    held1.stop();
    await Promise.all(running);

    assert.ok(fastDoneAfter < 10_000, `fast partition took ${fastDoneAfter} ms`);
    assert.equal(slowRecords, 0);
    assert.equal(e.target.records(dst(1)).length, 50);
    // The slow write that was in flight at the stop finished and was checkpointed.
    assert.equal(e.store.get(src(0))?.checkpoint, 10);
  });

  it("reads two fetches ahead of the batch being written", async () => {
    const e = env();
    e.source.append(src(0), makeRecords(30, 0));
    const events: string[] = [];
    e.source.hooks.beforeFetch = (_tp, offset) => {
      events.push(`fetch ${offset}`);
    };
    e.target.hooks.beforeWrite = async (_tp, records) => {
      events.push(`write ${records[0]?.offset}`);
      await e.clock.sleep(100);
      events.push(`acked ${records[0]?.offset}`);
    };
    const held = await hold(e, 0);
    const pump = pumpFor(e, held);

    await runUntilCaughtUp(e.clock, pump);

    assert.deepEqual(events.slice(0, 9), [
      "fetch 0",
      "fetch 10",
      "fetch 20",
      "write 0",
      "acked 0",
      "fetch 30",
      "write 10",
      "acked 10",
      "write 20",
    ]);
  });

  it("a write takes along the fetches read ahead, up to writeMaxBytes, every record once", async () => {
    const sizes = async (writeMaxBytes: number) => {
      const e = env();
      e.source.append(src(0), makeRecords(60, 0));
      const budget = new ReadAheadBudget(1 << 20);
      const writes: number[] = [];
      const held: number[] = [];
      e.target.hooks.beforeWrite = async (_tp, records) => {
        writes.push(records.length);
        held.push(budget.used);
        await e.clock.sleep(100); // a slow target: the next fetches are in before it answers
      };
      const pump = pumpFor(
        e,
        await hold(e, 0),
        { writeMaxBytes, batch: FULL_AT_TEN },
        { readAheadBudget: budget },
      );
      await runUntilCaughtUp(e.clock, pump);
      assert.deepEqual(values(e.target.records(dst(0))), values(e.source.records(src(0))));
      assert.equal(e.store.get(src(0))?.checkpoint, 60);
      assert.equal(budget.used, 0);
      return { writes, held, fetchBytes: e.metrics.batches.map((b) => b.bytes) };
    };
    const one = await sizes(0);
    assert.deepEqual(one.writes, [10, 10, 10, 10, 10, 10], "0: one fetch per write");
    const twoFetches = 2 * Math.max(...one.fetchBytes);
    const merged = await sizes(twoFetches);
    // Room for two fetches of ten records: each write takes the next fetch along.
    assert.deepEqual(merged.writes, [20, 20, 20]);
    // What a write took along stays charged to the read-ahead budget until it is written: during
    // the first write of 20, its second fetch (120 bytes) and the two read since (240).
    assert.deepEqual(one.fetchBytes, [120, 120, 120, 120, 120, 120]);
    assert.deepEqual(merged.held, [360, 240, 120]);
    assert.deepEqual((await sizes(twoFetches - 1)).writes, one.writes, "no room for a second fetch");
    // Behind, a write waits for the fetches on their way (answered at once here) up to the end.
    assert.deepEqual((await sizes(1 << 20)).writes, [60]);
  });

  it("reads slower than writes: a write of a partition behind waits for the fetches on their way, not one per fetch", async () => {
    const run = async (writeMaxBytes: number) => {
      const e = env();
      e.source.append(src(0), makeRecords(60, 0));
      e.source.hooks.beforeFetch = () => e.clock.sleep(100); // a slow source, a target at once
      const copy = await copyTimed(e, writeMaxBytes);
      assert.deepEqual(values(e.target.records(dst(0))), values(e.source.records(src(0))));
      assert.equal(e.store.get(src(0))?.checkpoint, 60);
      return copy;
    };
    const apart = await run(0);
    assert.deepEqual(
      apart.writes.map(([records]) => records),
      [10, 10, 10, 10, 10, 10],
    );
    const together = await run(3 * 120);
    assert.deepEqual(
      together.writes.map(([records]) => records),
      [30, 30],
    );
    // Waiting for reads that pace the copy anyway costs it no time.
    assert.ok(together.ms <= apart.ms, `${together.ms} ms against ${apart.ms} ms`);
  });

  it("a write of a partition caught up goes at once, not after the next fetch", async () => {
    const e = env();
    e.source.append(src(0), makeRecords(15, 0));
    // The fetch of 10-15 reaches the end: its write does not wait for the long poll after it.
    assert.deepEqual((await copyTimed(e, 1 << 20)).writes, [[15, 0]]);
  });

  it("a write waits for a fetch on its way at most batch.maxWaitMs", async () => {
    const e = env();
    e.source.append(src(0), makeRecords(20, 0));
    e.source.hooks.beforeFetch = async (_tp, offset) => {
      if (offset === 10) await e.clock.sleep(5_000); // a fetch that is slow to come back
    };
    assert.deepEqual((await copyTimed(e, 1 << 20)).writes, [
      [10, 500],
      [10, 5_000],
    ]);
  });

  it("a write waits batch.maxWaitMs in all, not that for each fetch it waits for", async () => {
    const e = env();
    e.source.append(src(0), makeRecords(60, 0));
    e.source.hooks.beforeFetch = async (_tp, offset) => {
      if (offset > 0) await e.clock.sleep(300);
    };
    // The fetch from 10 is in at 300 and taken along; the one from 20 would be in at 600.
    assert.deepEqual((await copyTimed(e, 1 << 20)).writes[0], [20, 500]);
  });

  it("a write does not wait for a fetch once the read-ahead budget is spent", async () => {
    const e = env();
    e.source.append(src(0), makeRecords(60, 0));
    e.source.hooks.beforeFetch = () => e.clock.sleep(100);
    // Fetches of 120 bytes. The two the write waits for and takes along (10-19, 20-29) spend the
    // budget of 200; taking the second resumed the chain, but the fetch from 30 is not waited for.
    const { writes } = await copyTimed(e, 1 << 20, { budgetBytes: 200 });
    assert.deepEqual(writes[0], [30, 300]);
  });

  it("a wait for a fetch ends when the lease does", async () => {
    const e = env();
    e.source.append(src(0), makeRecords(20, 0));
    e.source.hooks.beforeFetch = async (_tp, offset) => {
      if (offset === 10) await e.clock.sleep(60_000);
    };
    const held = await hold(e, 0);
    const pump = pumpFor(
      e,
      held,
      { writeMaxBytes: 1 << 20, batch: { maxRecords: 10, maxBytes: 1 << 20, maxWaitMs: 20_000 } },
      { readAheadBudget: new ReadAheadBudget(1 << 20) },
    );
    const started = e.clock.now();
    let endedAt: number | null = null;
    const running = pump.run().then(() => {
      endedAt = e.clock.now();
    });
    await until(e.clock, () => e.clock.now() >= started + 100);
    held.stop();
    await until(e.clock, () => endedAt !== null);
    await running;
    assert.equal(endedAt, started + 100);
    assert.deepEqual(e.target.records(dst(0)), [], "nothing written after the stop");
  });

  it("a source no faster than the target: reading goes on while a write of several fetches is out", async () => {
    const run = async (writeMaxBytes: number, batch = FULL_AT_TEN) => {
      const e = env();
      e.source.append(src(0), makeRecords(120, 0));
      e.source.hooks.beforeFetch = () => e.clock.sleep(100);
      // 5 ms a write and 9 ms a record: one fetch of 10 in 95 ms, a little under a read.
      const copy = await copyTimed(e, writeMaxBytes, { writeMs: (records) => 5 + 9 * records, batch });
      assert.deepEqual(values(e.target.records(dst(0))), values(e.source.records(src(0))));
      return { ...copy, sizes: copy.writes.map(([records]) => records) };
    };
    const apart = await run(0);
    assert.equal(apart.sizes.length, 12);
    const together = await run(3 * 120);
    assert.deepEqual(together.sizes, [30, 30, 30, 30]);
    // Paced by the reads either way: it ends at most its last write (of three fetches) later.
    assert.ok(together.ms <= apart.ms + 275, `${together.ms} ms against ${apart.ms} ms`);
    // Fetches cut by maxRecords, not full: the bytes would let a write hold three, but only two
    // results are read ahead (readAheadDepth), so it holds two and reading goes on meanwhile.
    const cut = await run(3 * 120, { ...FULL_AT_TEN, maxBytes: 1 << 20 });
    assert.deepEqual(cut.sizes, [20, 20, 20, 20, 20, 20]);
    assert.ok(cut.ms <= apart.ms + 185, `${cut.ms} ms against ${apart.ms} ms`);
  });

  it("never starts a write that could end after the lease expiry minus the margin", async () => {
    const e = env();
    e.source.append(src(0), makeRecords(100, 0));
    const writeSpans: [number, number][] = [];
    e.target.hooks.beforeWrite = async () => {
      const startedAt = e.clock.now();
      await e.clock.sleep(700);
      writeSpans.push([startedAt, e.clock.now()]);
    };
    // The lease is capped at a hard deadline 5 s away: no renewal can help.
    const deadline = e.clock.now() + 5_000;
    const held = await hold(e, 0, { expiresIn: 5_000, hardDeadline: deadline });

    const status = await pumpFor(e, held, { writeSafetyMarginMs: 1_000 }).run();

    assert.equal(status.stopReason, "deadline");
    assert.ok(writeSpans.length >= 4);
    for (const [startedAt, endedAt] of writeSpans) {
      assert.ok(startedAt + 1_000 <= deadline, `write started at ${deadline - startedAt} ms before expiry`);
      assert.ok(endedAt <= deadline);
    }
    assert.equal(e.store.get(src(0))?.checkpoint, writeSpans.length * 10);
  });

  it("a write too long for its lease stops before the lease ends", async () => {
    // Prepare: one fetch of 100 records, written in groups of 10 that take 1 s each (as the real
    // writer sends them: a group only if it can finish by the deadline), on a lease 5.5 s long
    // that is never renewed. The whole write would take 10 s.
    const e = env();
    e.source.append(src(0), makeRecords(100, 0));
    e.target.writeGroups = { records: 10, ms: 1_000 };
    const held = await hold(e, 0, { expiresIn: 5_500 });
    const expiresAt = held.lease.expiresAt;
    // A pump that ignored the cut would copy on and never stop by itself.
    void e.clock.sleep(60_000).then(() => held.stop());

    // Act
    const status = await pumpFor(e, held, {
      batch: { maxRecords: 100, maxBytes: 1 << 20, maxWaitMs: 500 },
    }).run();

    // Assess: five groups landed, all before the lease ended; that prefix is checkpointed and
    // nothing else was written, then the pump stopped at the lease's end.
    assert.equal(e.target.landedAt.length, 50);
    for (const at of e.target.landedAt)
      assert.ok(at <= expiresAt, `landed ${at - expiresAt} ms after expiry`);
    assert.deepEqual(values(e.target.records(dst(0))), values(e.source.records(src(0)).slice(0, 50)));
    assert.equal(e.store.get(src(0))?.checkpoint, 50);
    assert.equal(status.stopReason, "lease-expired");
    assert.equal(status.checkpoint, 50);
  });

  it("finishes a cut write once a renewal extends the lease, writing each record once", async () => {
    const e = env();
    e.source.append(src(0), makeRecords(100, 0));
    e.target.writeGroups = { records: 10, ms: 1_000 };
    const held = await hold(e, 0, { expiresIn: 5_500 });
    const pump = pumpFor(e, held, { batch: { maxRecords: 100, maxBytes: 1 << 20, maxWaitMs: 500 } });

    const running = pump.run();
    // The renewer comes late: after the write was cut at the old expiry.
    await until(e.clock, () => e.store.get(src(0))?.checkpoint === 50);
    held.update(await e.store.renew(held.lease, e.clock.now() + 60_000));
    await until(e.clock, () => e.store.get(src(0))?.checkpoint === 100);
    held.stop();
    await running;

    assert.deepEqual(values(e.target.records(dst(0))), values(e.source.records(src(0))));
  });

  it("stops quietly when the lease was taken over", async () => {
    const e = env();
    e.source.append(src(0), makeRecords(40, 0));
    let writes = 0;
    e.target.hooks.afterWrite = async () => {
      writes++;
      if (writes === 2) {
        const current = e.store.get(src(0));
        assert.ok(current);
        await e.store.claim(current, "thief", e.clock.now() + 60_000);
      }
    };
    const held = await hold(e, 0);

    const status = await pumpFor(e, held).run();

    assert.equal(status.stopReason, "lease-lost");
    assert.equal(status.error, null);
    assert.equal(held.lost, true);
    // The batch written during the takeover is not checkpointed: the thief repeats it, nothing is lost.
    assert.equal(e.store.get(src(0))?.checkpoint, 10);
    assert.equal(e.store.get(src(0))?.owner, "thief");
    assert.deepEqual(e.metrics.errors, []);
    assert.ok(e.logger.at("warn").some((l) => l.message.includes("lease lost")));
  });

  it("stores the progress a lease-store outage deferred when it stops after the store is back", async () => {
    // Prepare: every checkpoint of the copy is deferred; the store answers again before the stop.
    // The stored epoch is the source's, so no new epoch has to be stored before copying.
    const e = env();
    e.source.append(src(0), makeRecords(35, 0));
    const held = await hold(e, 0, { checkpoint: 0, sourceEpoch: 0 });
    const pump = pumpFor(e, held);
    e.store.unavailable = true;

    // Act
    const running = pump.run();
    await until(e.clock, () => pump.status.records === 35);
    assert.equal(e.store.get(src(0))?.checkpoint, 0);
    e.store.unavailable = false;
    held.stop();
    const status = await running;

    // Assess: the final checkpoint covers everything copied.
    assert.equal(status.stopReason, "stopped");
    assert.equal(e.store.get(src(0))?.checkpoint, 35);
    assert.equal(status.checkpoint, 35);
  });

  it("keeps copying through a lease-store outage only while the lease is valid by its own clock", async () => {
    const e = env();
    e.source.append(src(0), makeRecords(200, 0));
    const writeEnds: number[] = [];
    e.target.hooks.beforeWrite = async () => {
      await e.clock.sleep(500);
      writeEnds.push(e.clock.now());
    };
    const held = await hold(e, 0, { expiresIn: 4_000 });
    const expiresAt = held.lease.expiresAt;
    const pump = pumpFor(e, held, { writeSafetyMarginMs: 1_000 });

    const running = pump.run();
    await until(e.clock, () => pump.status.records >= 20);
    e.store.unavailable = true;
    const checkpointDuringOutage = e.store.get(src(0))?.checkpoint;
    const status = await running;

    assert.equal(status.stopReason, "lease-expired");
    assert.ok(
      writeEnds.every((t) => t <= expiresAt - 500),
      "a write ended inside the safety margin",
    );
    assert.ok(status.records > 20, "copying should go on during the outage");
    assert.equal(e.store.get(src(0))?.checkpoint, checkpointDuringOutage);
  });
});
