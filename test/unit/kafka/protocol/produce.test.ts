import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  decodeProduceResponse,
  encodeProduceRequest,
  produceRequest,
} from "../../../../lib/kafka/protocol/produce.js";

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ""), "hex");

describe("Produce request", () => {
  it("encodes a null transactional id, acks, timeout and the batch bytes unchanged", () => {
    const encoded = encodeProduceRequest({
      acks: -1,
      timeoutMs: 1000,
      topics: [{ topic: "t", partitions: [{ partition: 2, records: Buffer.from([0xaa, 0xbb]) }] }],
    });

    assert.deepEqual(
      encoded.buffer,
      hex("ffff ffff 000003e8 00000001 0001 74 00000001 00000002 00000002 aabb"),
    );
  });

  it("lays out several topics and partitions in one buffer of the exact size", () => {
    const encoded = encodeProduceRequest({
      acks: 1,
      timeoutMs: 5,
      topics: [
        {
          topic: "ab",
          partitions: [
            { partition: 0, records: Buffer.from([0x01]) },
            { partition: 7, records: Buffer.alloc(0) },
          ],
        },
        { topic: "é", partitions: [{ partition: 1, records: Buffer.from([0x02, 0x03]) }] },
      ],
    });

    const expected = hex(`ffff 0001 00000005 00000002
      0002 6162 00000002 00000000 00000001 01 00000007 00000000
      0002 c3a9 00000001 00000001 00000002 0203`);
    assert.deepEqual(encoded.buffer, expected);
    assert.equal(encoded.size(), expected.length);
  });

  it("refuses versions whose layout it does not implement", () => {
    assert.throws(() => produceRequest(8, { acks: -1, timeoutMs: 1, topics: [] }), RangeError);
    assert.throws(() => produceRequest(2, { acks: -1, timeoutMs: 1, topics: [] }), RangeError);
  });
});

describe("Produce response", () => {
  const v5 = hex(`
    00000001 0001 74
      00000001 00000002 002e 0000000000000010 ffffffffffffffff 0000000000000003
    00000000`);

  it("reads log_start_offset from v5 on", () => {
    assert.deepEqual(decodeProduceResponse(7, v5), {
      topics: [
        {
          topic: "t",
          partitions: [{ partition: 2, errorCode: 46, baseOffset: 16, logAppendTime: -1, logStartOffset: 3 }],
        },
      ],
      throttleTimeMs: 0,
    });
  });

  it("has no log_start_offset before v5", () => {
    const v3 = hex("00000001 0001 74 00000001 00000002 0000 0000000000000010 ffffffffffffffff 00000005");

    assert.deepEqual(decodeProduceResponse(3, v3), {
      topics: [
        {
          topic: "t",
          partitions: [{ partition: 2, errorCode: 0, baseOffset: 16, logAppendTime: -1, logStartOffset: -1 }],
        },
      ],
      throttleTimeMs: 5,
    });
  });
});
