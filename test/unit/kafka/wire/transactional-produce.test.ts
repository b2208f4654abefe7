import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { produceHeadSize, writeProduceHead } from "../../../../lib/kafka/wire/produce.js";
import {
  transactionalProduceHeadSize,
  writeTransactionalProduceHead,
} from "../../../../lib/kafka/wire/transactional-produce.js";

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ""), "hex");

describe("transactional Produce request", () => {
  it("writes the transactional id, then what a non-transactional head writes", () => {
    // Prepare
    const topic = Buffer.from("t");
    const transactionalId = Buffer.from("tx");
    const body = Buffer.alloc(transactionalProduceHeadSize(topic, transactionalId) + 2, 0xcc);
    body.set([0xaa, 0xbb], transactionalProduceHeadSize(topic, transactionalId));

    // Act
    writeTransactionalProduceHead(body, { acks: -1, timeoutMs: 1000, topic, partition: 2, transactionalId });

    // Assess
    assert.deepEqual(body, hex("0002 7478 ffff 000003e8 00000001 0001 74 00000001 00000002 00000002 aabb"));
    const plain = writeProduceHead(Buffer.alloc(produceHeadSize(topic) + 2), {
      acks: -1,
      timeoutMs: 1000,
      topic,
      partition: 2,
    });
    assert.deepEqual(
      body.subarray(4, 4 + produceHeadSize(topic) - 2),
      plain.subarray(2, produceHeadSize(topic)),
    );
  });

  it("refuses an empty or over-long transactional id and a body with no room for its head", () => {
    const topic = Buffer.from("t");
    const head = { acks: -1, timeoutMs: 1, topic, partition: 0 };
    const tooLong = Buffer.alloc(32_768, 0x61);
    assert.throws(
      () => writeTransactionalProduceHead(Buffer.alloc(100), { ...head, transactionalId: Buffer.alloc(0) }),
      /must be 1\.\.32767 bytes, not 0/,
    );
    assert.throws(
      () => writeTransactionalProduceHead(Buffer.alloc(40_000), { ...head, transactionalId: tooLong }),
      /not 32768/,
    );
    const id = Buffer.from("tx");
    assert.throws(
      () =>
        writeTransactionalProduceHead(Buffer.alloc(transactionalProduceHeadSize(topic, id) - 1), {
          ...head,
          transactionalId: id,
        }),
      /shorter than its head/,
    );
  });
});
