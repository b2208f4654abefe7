/**
 * The order "fence the target partition, then look at the target tail, then write", after a
 * write of unknown outcome and when a partition is taken. A write of ours whose outcome is
 * unknown may still be in flight (a zombie transaction): a look taken before the fence can miss
 * it, it lands after the look, and its records are written again. The fake's zombie commits
 * right after the next look unless a fence ends it first (late-commit-writer.ts).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { TopicPartition } from "../../../../lib/core/model.js";
import type { Lease } from "../../../../lib/core/ports.js";
import { lastProvenance, type ProvenanceSettings } from "../../../../lib/core/provenance.js";
import { HeldLease } from "../../../../lib/core/pump/held-lease.js";
import { PartitionPump } from "../../../../lib/core/pump/partition-pump.js";
import { until } from "../../../helpers/fake-clock.js";
import { makeRecords } from "../../../helpers/fake-cluster.js";
import { LateCommitWriter } from "../../../helpers/late-commit-writer.js";
import { inMemoryWorld, pumpDeps, runUntilCaughtUp } from "../../../helpers/pump-fixture.js";

const HEADER = Buffer.from("kafka-mirror.provenance");
const PROVENANCE: ProvenanceSettings = { header: HEADER, sourceAlias: "A", targetAlias: "B" };
const src: TopicPartition = { topic: "src", partition: 0 };
const dst: TopicPartition = { topic: "dst", partition: 0 };
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

function env() {
  const world = inMemoryWorld();
  world.source.createTopic("src", 1);
  world.target.createTopic("dst", 1);
  world.source.append(src, makeRecords(30, 0));
  return world;
}
type Env = ReturnType<typeof env>;

async function claim(e: Env, owner: string, expiresIn = 60_000): Promise<HeldLease> {
  await e.store.ensure([src]);
  const claimed = await e.store.claim(e.store.get(src) as Lease, owner, e.clock.now() + expiresIn);
  assert.ok(claimed, `${owner} could not claim`);
  return new HeldLease(claimed, { source: src, target: dst }, Number.MAX_SAFE_INTEGER);
}

/** An exactly-once pump writing and looking through `writer`, 10 records a batch. */
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
      retry: { initialMs: 50, maxMs: 1_000 },
      provenance: PROVENANCE,
    },
    held,
  );
}

/** Source offsets in the target, in target order, read from the provenance headers. */
function copiedOffsets(e: Env): number[] {
  return e.target.records(dst).map((r) => lastProvenance(r, HEADER)?.offset ?? -1);
}

function assertExactlyOnce(e: Env, writer: LateCommitWriter): void {
  assert.deepEqual(
    copiedOffsets(e),
    range(30),
    `target holds a duplicate or a gap; ${writer.events.join(" > ")}`,
  );
}

// Kafka's InitProducerId aborts an open transaction, or completes one whose commit was under way.
for (const onFence of ["abort", "commit"] as const) {
  const ended = `open transaction ${onFence === "abort" ? "aborted" : "committed"}`;
  describe(`fence before the look (a fence that ${onFence}s the open transaction)`, () => {
    it("after a write that timed out: the late transaction cannot land behind the look", async () => {
      // Prepare: the second write (source offsets 10-19) times out with its transaction open.
      const e = env();
      const writer = new LateCommitWriter(e.target, { onFence }).strand(2, "times-out");
      const held = await claim(e, "w1");

      // Act
      const status = await runUntilCaughtUp(e.clock, pumpFor(e, held, writer));

      // Assess
      assert.equal(status.error, null);
      assertExactlyOnce(e, writer);
      assert.ok(writer.events.includes(ended), writer.events.join(" > "));
      assert.equal(e.store.get(src)?.checkpoint, 30);
    });

    it("at start-up: a former holder's hung write cannot land behind the new holder's look", async () => {
      // Prepare: w1 writes 0-9, then freezes inside its write of 10-19, transaction open.
      const e = env();
      const writer = new LateCommitWriter(e.target, { onFence }).strand(2, "hangs");
      const first = pumpFor(e, await claim(e, "w1", 5_000), writer);
      const stopped = first.run();
      await until(e.clock, () => writer.pending);
      assert.equal(e.store.get(src)?.checkpoint, 10);
      e.clock.advance(6_000);

      // Act: w2 takes the partition once w1's lease ran out.
      const status = await runUntilCaughtUp(e.clock, pumpFor(e, await claim(e, "w2"), writer));

      // Assess
      assert.equal(status.error, null);
      assertExactlyOnce(e, writer);
      assert.ok(writer.events.includes(ended), writer.events.join(" > "));
      assert.equal(e.store.get(src)?.checkpoint, 30);
      // The zombie's write answered once its transaction ended; w1 stops without an error.
      assert.notEqual((await stopped).stopReason, "error");
    });
  });
}
