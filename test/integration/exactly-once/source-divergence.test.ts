/**
 * A source log that diverges under a checkpoint is never read on silently: a topic deleted and
 * created again (the mock gives it a new topic id) is copied again from its start, all of it,
 * and the offsets whose copies no longer match the source are counted in recordsLost.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_PROVENANCE_HEADER, lastProvenance } from "../../../lib/core/provenance.js";
import { useMirrorRig } from "./mirror-rig.js";

const HEADER = Buffer.from(DEFAULT_PROVENANCE_HEADER);
const TOPIC = "EVENTS";
const tp = { topic: TOPIC, partition: 0 };
const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);

describe("the source topic is re-created under a checkpoint", () => {
  const rig = useMirrorRig(["src", "dst"], TOPIC);

  it("copies every record of the new log, none skipped, and counts the loss", async () => {
    // Prepare: 50 records copied and checkpointed at 50
    const whitelist = { topics: { whitelist: TOPIC } };
    await rig.produce("src", TOPIC, 0, 50, 1);
    const first = await rig.replicate("src", "dst", whitelist);
    assert.deepEqual(first.metrics.lost, []);
    await rig.cluster("src").deleteTopic(TOPIC);
    await rig.cluster("src").createTopic(TOPIC, 1, 1);
    // More than the checkpoint: resuming at 50 would skip 0..49 of the new log without a word.
    await rig.produce("src", TOPIC, 0, 70, 2);

    // Act
    const { metrics, logger } = await rig.replicate("src", "dst", whitelist);

    // Assess
    assert.deepEqual(metrics.lost, [{ topic: TOPIC, partition: 0, from: 0, to: 50 }]);
    const logged = logger.at("error").filter((e) => /re-created/.test(e.message));
    assert.equal(logged.length, 1, JSON.stringify(logger.at("error")));
    const copied = await rig.read("dst", tp);
    assert.deepEqual(
      copied.map((r) => lastProvenance(r, HEADER)?.offset),
      [...range(0, 50), ...range(0, 70)],
    );
    const fresh = await rig.read("src", tp);
    assert.deepEqual(
      copied.slice(50).map((r) => r.value?.toString("hex")),
      fresh.map((r) => r.value?.toString("hex")),
    );
  });
});

describe("the source log is truncated under a checkpoint (unclean leader election)", () => {
  const rig = useMirrorRig(["src", "dst"], TOPIC);

  it("resumes where the log diverged, copies the new records at reused offsets and counts the loss", async () => {
    // Prepare: two batches, 0..29 and 30..49, copied and checkpointed at 50
    const whitelist = { topics: { whitelist: TOPIC } };
    await rig.produce("src", TOPIC, 0, 30, 1);
    await rig.produce("src", TOPIC, 0, 20, 2);
    await rig.replicate("src", "dst", whitelist);
    // The new leader's log ends at 30 (launcher `truncate-log`, epoch + 1); 25 new records follow,
    // so offsets 30..49 now hold different records and resuming at 50 would skip them.
    await rig.cluster("src").command(`truncate-log ${TOPIC} 0 30`);
    await rig.produce("src", TOPIC, 0, 25, 3);

    // Act
    const { metrics, logger } = await rig.replicate("src", "dst", whitelist);

    // Assess
    assert.deepEqual(metrics.lost, [{ topic: TOPIC, partition: 0, from: 30, to: 50 }]);
    assert.equal(logger.at("error").filter((e) => /truncated/.test(e.message)).length, 1);
    const copied = await rig.read("dst", tp);
    assert.deepEqual(
      copied.map((r) => lastProvenance(r, HEADER)?.offset),
      [...range(0, 50), ...range(30, 25)],
    );
    const source = await rig.read("src", tp);
    assert.deepEqual(
      copied.slice(50).map((r) => r.value?.toString("hex")),
      source.slice(30).map((r) => r.value?.toString("hex")),
    );
  });
});
