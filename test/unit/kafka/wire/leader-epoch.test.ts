/**
 * The bytes behind source-continuity's inputs: the leader epoch of each fetched batch, Metadata
 * v10+ (topic id, leader, leader epoch) laid out and read back, and OffsetForLeaderEpoch's
 * current leader epoch. Against a broker: the re-creation and truncation tests in
 * test/integration/exactly-once/source-divergence.test.ts, and test/integration/kafka/leader-epoch.test.ts.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { decodeRecordBatches, encodeRecordBatch } from "../../../../lib/kafka/codec/record-batch.js";
import { epochsOf } from "../../../../lib/kafka/read/fetch-result.js";
import { FlexReader, FlexWriter } from "../../../../lib/kafka/wire/flexible.js";
import { decodeMetadataResponse, encodeMetadataRequest } from "../../../../lib/kafka/wire/metadata.js";
import { offsetForLeaderEpochRequest } from "../../../../lib/kafka/wire/offset-for-leader-epoch.js";

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ""), "hex");

const PLAIN = { compression: "none", producerId: -1n, producerEpoch: -1, baseSequence: -1 } as const;

async function batchWithEpoch(epoch: number, value: string): Promise<Buffer> {
  const batch = await encodeRecordBatch(
    [{ offset: 0, timestamp: 1, key: null, value: Buffer.from(value), headers: [] }],
    PLAIN,
  );
  batch.writeInt32BE(epoch, 12); // partitionLeaderEpoch, as the broker stamps it
  return batch;
}

async function batchAt(offset: number, epoch: number, value: string): Promise<Buffer> {
  const batch = await batchWithEpoch(epoch, value);
  batch.writeBigInt64BE(BigInt(offset), 0); // baseOffset, as the broker stamps it
  return batch;
}

describe("leader epochs of fetched batches", () => {
  it("each batch's partitionLeaderEpoch is decoded; a truncated trailing batch is not there", async () => {
    const a = await batchAt(0, 3, "a");
    const b = await batchAt(1, 5, "b");
    const c = await batchAt(2, 9, "c");

    const batches = await decodeRecordBatches(Buffer.concat([a, b, c.subarray(0, c.length - 1)]));

    assert.deepEqual(
      batches.map((x) => x.leaderEpoch),
      [3, 5],
    );
  });

  it("epochsOf names where each epoch begins within the range read, one entry per change", async () => {
    const batches = await decodeRecordBatches(
      Buffer.concat([
        await batchAt(0, 3, "a"),
        await batchAt(1, 3, "b"),
        await batchAt(2, 5, "c"),
        await batchAt(3, 5, "d"),
        await batchAt(4, 6, "e"),
      ]),
    );

    assert.deepEqual(epochsOf(batches, 1, 4), [
      { offset: 1, epoch: 3 },
      { offset: 2, epoch: 5 },
    ]);
    assert.deepEqual(epochsOf(batches, 2, 5), [
      { offset: 2, epoch: 5 },
      { offset: 4, epoch: 6 },
    ]);
    assert.deepEqual(epochsOf(batches, 5, 5), []);
  });
});

describe("Metadata v10-v12", () => {
  it("asks for one topic without auto-creation, v10 with the cluster operations flag", () => {
    const v10 = new FlexReader(encodeMetadataRequest(10, "orders"));
    v10.skipTags();
    const topics = v10.compactArray((t) => {
      const id = t.uuid();
      const name = t.compactString();
      t.skipTags();
      return { id, name };
    });
    assert.deepEqual(topics, [{ id: null, name: "orders" }]);
    assert.deepEqual([v10.int8(), v10.int8(), v10.int8()], [0, 0, 0]);
    assert.equal(encodeMetadataRequest(12, "orders").length, encodeMetadataRequest(10, "orders").length - 1);
  });

  it("reads the topic id and each partition's leader with its epoch", () => {
    const topicId = Buffer.from("0123456789abcdef0123456789abcdef", "hex");
    const partition = (id: number, leader: number, epoch: number) =>
      new FlexWriter()
        .int8(0)
        .int8(0)
        .int32(id)
        .int32(leader)
        .int32(epoch)
        .uvarint(1)
        .uvarint(1)
        .uvarint(1)
        .noTags();
    const response = Buffer.concat([
      new FlexWriter().noTags().int32(0).uvarint(1).compactString("cluster").int32(1).uvarint(2).toBuffer(),
      new FlexWriter().int8(0).int8(0).compactString("orders").toBuffer(),
      topicId,
      new FlexWriter().int8(0).uvarint(3).toBuffer(),
      partition(0, 1, 7).toBuffer(),
      partition(1, 3, 2).toBuffer(),
      new FlexWriter().int32(0).noTags().int32(0).noTags().toBuffer(),
    ]);

    assert.deepEqual(decodeMetadataResponse(10, response), {
      errorCode: 0,
      topicId: "0123456789abcdef0123456789abcdef",
      partitions: [
        { partition: 0, leader: 1, leaderEpoch: 7 },
        { partition: 1, leader: 3, leaderEpoch: 2 },
      ],
    });
  });
});

describe("OffsetForLeaderEpoch v2-v3", () => {
  const request = { topic: "t", partition: 4, currentLeaderEpoch: 9, leaderEpoch: 6 };
  const encode = async (version: number) =>
    (await offsetForLeaderEpochRequest(version, request).request.encode()).buffer;

  it("v2 sends the current leader epoch before the epoch asked about", async () => {
    assert.deepEqual(await encode(2), hex("00000001 0001 74 00000001 00000004 00000009 00000006"));
  });

  it("v3 sends the same after replica_id -1 (a consumer)", async () => {
    assert.deepEqual(await encode(3), hex("ffffffff 00000001 0001 74 00000001 00000004 00000009 00000006"));
  });
});
