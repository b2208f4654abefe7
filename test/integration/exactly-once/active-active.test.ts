/**
 * Active-active: two replicators, A to B and B to A, over the same topic on two mock clusters.
 * Provenance headers keep a record from coming back to the cluster it came from.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_PROVENANCE_HEADER, lastProvenance } from "../../../lib/core/provenance.js";
import { useMirrorRig } from "./mirror-rig.js";

const HEADER = Buffer.from(DEFAULT_PROVENANCE_HEADER);
const TOPIC = "ORDERS";
const tp = { topic: TOPIC, partition: 0 };

describe("active-active pair", () => {
  const rig = useMirrorRig(["A", "B"], TOPIC);

  it("a record copied from A to B is not copied back from B to A, and vice versa", async () => {
    // Prepare: native traffic on both sides.
    await rig.produce("A", TOPIC, 0, 30, 0xa);
    await rig.produce("B", TOPIC, 0, 20, 0xb);
    const whitelist = { topics: { whitelist: TOPIC } };

    // Act: A to B, then B to A (which sees A's copies in B), then A to B again (which sees B's copies in A).
    await rig.replicate("A", "B", whitelist);
    const bToA = await rig.replicate("B", "A", whitelist);
    await rig.replicate("A", "B", whitelist);

    // Assess: each side has its own 20 or 30 records and one copy of the other side's.
    const inA = await rig.read("A", tp);
    const inB = await rig.read("B", tp);
    assert.equal(inA.length, 30 + 20);
    assert.equal(inB.length, 20 + 30);
    assert.deepEqual(
      inA.slice(30).map((r) => lastProvenance(r, HEADER)),
      inB.slice(0, 20).map((r) => ({ alias: "B", partition: 0, offset: r.offset })),
    );
    assert.deepEqual(
      inB.slice(20).map((r) => lastProvenance(r, HEADER)),
      inA.slice(0, 30).map((r) => ({ alias: "A", partition: 0, offset: r.offset })),
    );
    // B to A read B's 30 copies from A, skipped them and still checkpointed past them, and past
    // the commit marker of the transaction that wrote them (offset 50).
    const partition = bToA.summary.partitions.find((p) => p.source.topic === TOPIC);
    assert.equal(partition?.checkpoint, 51);
    assert.equal(partition?.records, 50);
  });
});
