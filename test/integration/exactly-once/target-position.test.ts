/**
 * The target position stored with each exactly-once checkpoint follows the holder's writes past
 * the commit marker every transaction leaves, so the next holder's look at the target tail
 * reads only what came after the last checkpoint. It used to stay where the holder's first
 * write ended, and a successor re-read everything the holder had written: a handoff after a
 * 5-minute round stalled its partition for ~30 s on the test bed.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { useMirrorRig } from "./mirror-rig.js";

const TOPIC = "POSITIONS";
const tp = { topic: TOPIC, partition: 0 };

describe("exactly-once target position", () => {
  const rig = useMirrorRig(["src", "dst"], TOPIC);

  it("is stored right after the last copied record, past the markers of earlier transactions", async () => {
    await rig.produce("src", TOPIC, 0, 100, 1);
    // Fetches of five records, a write holding at most four fetches (readAheadDepth at the
    // defaults): five writes or more, five transactions, each followed by its commit marker, so
    // the last record lies past four markers at least.
    const config = { topics: { whitelist: TOPIC }, batch: { maxRecords: 5 } };
    const { summary } = await rig.replicate("src", "dst", config);
    assert.deepEqual(summary.errors, []);

    const copied = await rig.read("dst", tp);
    assert.equal(copied.length, 100);
    const last = copied.at(-1)?.offset ?? -1;
    assert.ok(
      last >= 103,
      `target offsets ${copied[0]?.offset}..${last}: expected markers between the writes`,
    );
    const lease = await rig.lease("src", "dst", tp);
    assert.equal(lease?.checkpoint, 100);
    assert.equal(lease?.targetOffset, last + 1, "a successor would re-read the writes before this position");
  });
});
