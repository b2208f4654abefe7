import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { describe, it } from "node:test";
import { tolerateLeaderlessPartitions } from "../../../../lib/kafka/wire/kafkajs-metadata.js";

type Parse = (data: unknown) => Promise<unknown>;
const require = createRequire(import.meta.url);
const versions = [0, 1, 2, 3, 4, 5, 6].map(
  (v) => require(`kafkajs/src/protocol/requests/metadata/v${v}/response.js`) as { parse: Parse },
);

/** A decoded Metadata answer: `orders` with a partition in `partitionError`, `payments` healthy. */
function answer(partitionError: number, topicError = 0) {
  const partition = (partitionId: number, partitionErrorCode: number, leader: number) => ({
    partitionErrorCode,
    partitionId,
    leader,
    replicas: [2],
    isr: leader < 0 ? [] : [leader],
    offlineReplicas: leader < 0 ? [2] : [],
  });
  return {
    brokers: [{ nodeId: 1, host: "127.0.0.1", port: 9092, rack: null }],
    controllerId: 1,
    topicMetadata: [
      {
        topicErrorCode: topicError,
        topic: "orders",
        isInternal: false,
        partitionMetadata: [partition(0, 0, 1), partition(1, partitionError, -1)],
      },
      { topicErrorCode: 0, topic: "payments", isInternal: false, partitionMetadata: [partition(0, 0, 1)] },
    ],
  };
}

const LEADER_NOT_AVAILABLE = 5;
const UNKNOWN_TOPIC_OR_PARTITION = 3;
const CORRUPT_MESSAGE = 2;

describe("kafkajs Metadata with a partition without a leader", () => {
  it("kafkajs 2.2.4 itself throws the whole answer away for it (why the patch exists)", async () => {
    const original = versions[6]?.parse;
    assert.ok(original);
    await assert.rejects(
      original(answer(LEADER_NOT_AVAILABLE)),
      /There is no leader for this topic-partition/,
    );
  });

  it("is kept, leader -1, in every version's answer once patched; other errors still fail it", async () => {
    tolerateLeaderlessPartitions();
    tolerateLeaderlessPartitions(); // once per process, however often asked

    for (const [v, module] of versions.entries()) {
      const kept = (await module.parse(answer(LEADER_NOT_AVAILABLE))) as ReturnType<typeof answer>;
      assert.deepEqual(kept, answer(LEADER_NOT_AVAILABLE), `v${v}: the answer as Kafka gave it`);
      await assert.rejects(module.parse(answer(CORRUPT_MESSAGE)), `v${v}: another partition error`);
      await assert.rejects(module.parse(answer(0, UNKNOWN_TOPIC_OR_PARTITION)), `v${v}: a topic error`);
    }
  });
});
