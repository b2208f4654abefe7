/**
 * The pump's final checkpoint after a look at the target: the look moved the target position
 * past records of an uncertain write that landed, so the checkpoint stored with that position
 * must be past them too, or the next holder (reading from the position) copies them again.
 *
 * Trigger: checkpoints coalesced (leases.checkpointIntervalMs) so the checkpoint lags the pump's
 * next offset; a write lands in part and fails (uncertain); the look after it runs; the pump is
 * told to stop (handoff asked at a renewal, drain, end of run) before the rest is written.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { HeldLease } from "../../../lib/core/held-lease.js";
import type { MirrorRecord, TopicPartition } from "../../../lib/core/model.js";
import { PartitionPump } from "../../../lib/core/partition-pump.js";
import type { Lease } from "../../../lib/core/ports.js";
import { lastProvenance, type ProvenanceSettings } from "../../../lib/core/provenance.js";
import { ReplicatorError } from "../../../lib/errors.js";
import { inMemoryWorld, makeRecords, pumpDeps, runUntilCaughtUp } from "../../helpers/fakes.js";

const HEADER = Buffer.from("kafka-mirror.provenance");
const PROVENANCE: ProvenanceSettings = { header: HEADER, sourceAlias: "A", targetAlias: "B" };
const FAR = Number.MAX_SAFE_INTEGER;
const src: TopicPartition = { topic: "src", partition: 0 };
const dst: TopicPartition = { topic: "dst", partition: 0 };

function env() {
  const world = inMemoryWorld();
  world.source.createTopic("src", 1);
  world.target.createTopic("dst", 1);
  return world;
}
type Env = ReturnType<typeof env>;

async function claim(e: Env, owner: string, expiresIn: number): Promise<HeldLease> {
  await e.store.ensure([src]);
  const observed = e.store.get(src) as Lease;
  const claimed = await e.store.claim(observed, owner, e.clock.now() + expiresIn);
  assert.ok(claimed, `${owner} could not claim`);
  return new HeldLease(claimed, { source: src, target: dst }, FAR);
}

function pumpFor(e: Env, held: HeldLease): PartitionPump {
  return new PartitionPump(
    { ...pumpDeps(e), targetTail: { reader: e.target, admin: e.target, logger: e.logger } },
    {
      batch: { maxRecords: 10, maxBytes: 1 << 20, maxWaitMs: 500 },
      startFrom: "earliest",
      writeSafetyMarginMs: 1_000,
      retry: { initialMs: 50, maxMs: 1_000 },
      provenance: PROVENANCE,
      checkpointIntervalMs: 60_000, // coalesced, as leases.checkpointIntervalMs (default 1 s) does
    },
    held,
  );
}

const copied = (e: Env) =>
  e.target.records(dst).map((r: MirrorRecord) => lastProvenance(r, HEADER)?.offset ?? -1);
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe("the final checkpoint after a look at the target", () => {
  it("a stop right after the look that found part of an uncertain write leaves no duplicate for the next holder (regression)", async () => {
    const e = env();
    e.source.append(src, makeRecords(30, 0));
    let writes = 0;
    let uncertain = false;
    // The third write (source 20..29) lands its first batch (20..24), then the connection breaks.
    e.target.hooks.beforeWrite = (tp, records) => {
      if (++writes !== 3) return;
      e.target.append(tp, records.slice(0, 5));
      uncertain = true;
      throw new ReplicatorError("KAFKA_RETRIABLE", "broker went away after the first batch");
    };
    const first = await claim(e, "w1", 5_000);
    // The look after it reads the target; meanwhile the pump is told to stop (a renewal brought a
    // handoff request, the run drains or ends).
    e.target.hooks.beforeFetch = () => {
      if (uncertain) first.stop();
    };
    const status = await pumpFor(e, first).run();
    assert.equal(status.stopReason, "stopped");

    const lease = e.store.get(src) as Lease;
    const stored = `checkpoint ${lease.checkpoint}, position ${lease.targetOffset}`;

    e.target.hooks = {};
    e.clock.advance(6_000);
    const second = await claim(e, "w2", 60_000);
    const done = await runUntilCaughtUp(e.clock, pumpFor(e, second));
    assert.equal(done.error, null);
    assert.deepEqual(copied(e), range(30), `the first holder stored ${stored}`);
  });
});
