import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isReplicatorError } from "../../../../lib/errors.js";
import { KafkaGroupAdmin } from "../../../../lib/kafka/admin/group-admin.js";

// Nothing listens here: every case must be refused before a connection is tried.
const admin = new KafkaGroupAdmin({ brokers: ["127.0.0.1:9"], connectionTimeoutMs: 100 });

async function refusal(call: () => Promise<unknown>): Promise<string> {
  try {
    await call();
  } catch (error) {
    assert.ok(isReplicatorError(error, "CONFIG_INVALID"), String(error));
    return error.message;
  }
  assert.fail("expected CONFIG_INVALID");
}

describe("KafkaGroupAdmin arguments", () => {
  it("refuses an empty group id, naming the call", async () => {
    assert.match(
      await refusal(() => admin.fetchOffsets("")),
      /fetchOffsets: groupId must be a non-empty string, got ""/,
    );
    assert.match(await refusal(() => admin.describeGroups(["g", ""])), /describeGroups: groupId/);
    assert.match(await refusal(() => admin.commitOffsets("", [])), /commitOffsets: groupId/);
  });

  it("refuses bad offsets before sending anything, naming the entry and what is allowed", async () => {
    const commit = (offsets: Parameters<KafkaGroupAdmin["commitOffsets"]>[1]) => () =>
      admin.commitOffsets("g", offsets);
    assert.match(
      await refusal(commit([{ topic: "t", partition: 0, offset: -1 }])),
      /offsets\[0\]\.offset must be a non-negative safe integer, got -1/,
    );
    assert.match(
      await refusal(
        commit([
          { topic: "t", partition: 0, offset: 1 },
          { topic: "t", partition: 1.5, offset: 1 },
        ]),
      ),
      /offsets\[1\]\.partition must be an integer 0\.\.2147483647, got 1\.5/,
    );
    assert.match(await refusal(commit([{ topic: "", partition: 0, offset: 1 }])), /offsets\[0\]\.topic/);
    assert.match(
      await refusal(
        commit([
          { topic: "t", partition: 2, offset: 1 },
          { topic: "t", partition: 2, offset: 5 },
        ]),
      ),
      /offsets\[1\] must be each partition at most once, got "t\/2"/,
    );
  });

  it("commits nothing and asks nobody for an empty list", async () => {
    await admin.commitOffsets("g", []);
    assert.deepEqual(await admin.describeGroups([]), []);
  });
});
