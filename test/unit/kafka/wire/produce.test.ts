import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  decodeProduceResponse,
  produceHeadSize,
  writeProduceHead,
} from "../../../../lib/kafka/wire/produce.js";

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ""), "hex");

describe("Produce request", () => {
  it("writes a null transactional id, acks, timeout, one topic and partition in front of the batch", () => {
    const topic = Buffer.from("t");
    const body = Buffer.alloc(produceHeadSize(topic) + 2, 0xcc);
    body.set([0xaa, 0xbb], produceHeadSize(topic));

    writeProduceHead(body, { acks: -1, timeoutMs: 1000, topic, partition: 2 });

    assert.deepEqual(body, hex("ffff ffff 000003e8 00000001 0001 74 00000001 00000002 00000002 aabb"));
  });

  it("counts a multi-byte topic name in bytes", () => {
    const topic = Buffer.from("é", "utf8");
    const body = writeProduceHead(Buffer.alloc(produceHeadSize(topic) + 1, 0x01), {
      acks: 1,
      timeoutMs: 5,
      topic,
      partition: 7,
    });

    assert.deepEqual(body, hex("ffff 0001 00000005 00000001 0002 c3a9 00000001 00000007 00000001 01"));
  });

  it("refuses a body with no room for its head", () => {
    const topic = Buffer.from("topic");
    assert.throws(
      () =>
        writeProduceHead(Buffer.alloc(produceHeadSize(topic) - 1), {
          acks: -1,
          timeoutMs: 1,
          topic,
          partition: 0,
        }),
      RangeError,
    );
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

  it("refuses versions whose layout it does not implement", () => {
    assert.throws(() => decodeProduceResponse(8, v5), RangeError);
    assert.throws(() => decodeProduceResponse(2, v5), RangeError);
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
