/**
 * Source retention deleting records before they were copied is never silent: the worker resumes
 * at the log start, counts the lost range in the recordsLost metric and logs it as an error.
 * Retention is imitated with DeleteRecords (on the mock `delete-records`, our launcher command; on
 * real Kafka the admin call, after which the broker's log start is what retention would leave).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_PROVENANCE_HEADER, lastProvenance } from "../../../lib/core/provenance.js";
import { useMirrorRig } from "./mirror-rig.js";

const HEADER = Buffer.from(DEFAULT_PROVENANCE_HEADER);
const TOPIC = "EVENTS";
const tp = { topic: TOPIC, partition: 0 };

describe("source retention overtakes the replicator", () => {
  const rig = useMirrorRig(["src", "dst"], TOPIC);

  it("reports the deleted, uncopied range in the metric and the log, and copies the rest", async () => {
    const whitelist = { topics: { whitelist: TOPIC } };
    await rig.produce("src", TOPIC, 0, 100, 1);
    await rig.replicate("src", "dst", whitelist);
    await rig.produce("src", TOPIC, 0, 100, 2);
    // Retention drops offsets below 150 while 100..199 wait to be copied.
    await rig.cluster("src").deleteRecords(TOPIC, 0, 150);

    const { metrics, logger } = await rig.replicate("src", "dst", whitelist);

    assert.deepEqual(metrics.lost, [{ topic: TOPIC, partition: 0, from: 100, to: 150 }]);
    const logged = logger.at("error").filter((e) => e.fields.from === 100 && e.fields.to === 150);
    assert.equal(logged.length, 1, JSON.stringify(logger.at("error")));
    const copied = (await rig.read("dst", tp)).map((r) => lastProvenance(r, HEADER)?.offset);
    assert.deepEqual(copied, [
      ...Array.from({ length: 100 }, (_, i) => i),
      ...Array.from({ length: 50 }, (_, i) => 150 + i),
    ]);
  });
});
