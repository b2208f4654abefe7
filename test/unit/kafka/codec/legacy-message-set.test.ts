/**
 * Magic 0 and 1 message sets through decodeRecordBatches (the Fetch path's decoder), encoded by
 * test/helpers/legacy-message-set.ts (node:zlib's CRC-32 and gzip, snappyjs, lz4js). Against a
 * broker, with librdkafka as the producer: test/integration/kafka/legacy-message-set.test.ts.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { MirrorRecord } from "../../../../lib/core/model.js";
import { isReplicatorError } from "../../../../lib/errors.js";
import { crc32 } from "../../../../lib/kafka/codec/crc32.js";
import { NO_TIMESTAMP } from "../../../../lib/kafka/codec/legacy-message-set.js";
import { decodeRecordBatches, encodeRecordBatch } from "../../../../lib/kafka/codec/record-batch.js";
import {
  type LegacyCodec,
  type LegacyMessageSpec,
  legacyMessage,
  legacyWrapper,
} from "../../../helpers/legacy-message-set.js";

const CODECS: LegacyCodec[] = ["gzip", "snappy", "xerial-snappy", "lz4", "lz4-broken-hc"];
const T0 = 1_700_000_000_000;

function isCorrupt(pattern: RegExp) {
  return (error: unknown): boolean =>
    isReplicatorError(error, "CORRUPT_BATCH") && pattern.test(error.message);
}

/** Keys and values a copy must keep: null, empty, binary, not UTF-8. */
function awkward(magic: 0 | 1, offsetOf: (i: number) => number): LegacyMessageSpec[] {
  const pairs: [Buffer | null, Buffer | null][] = [
    [Buffer.from("k0"), Buffer.from("v0")],
    [null, Buffer.from([0x00, 0xff, 0xfe])],
    [Buffer.from([0xc3, 0x28]), null],
    [Buffer.alloc(0), Buffer.alloc(0)],
  ];
  return pairs.map(([key, value], i) => ({ magic, offset: offsetOf(i), timestamp: T0 + i * 7, key, value }));
}

function expected(specs: readonly LegacyMessageSpec[], offsetOf: (i: number) => number): MirrorRecord[] {
  return specs.map((s, i) => ({
    offset: offsetOf(i),
    timestamp: s.magic === 1 ? (s.timestamp ?? 0) : NO_TIMESTAMP,
    key: s.key,
    value: s.value,
    headers: [],
  }));
}

describe("legacy message sets: uncompressed", () => {
  for (const magic of [0, 1] as const) {
    it(`reads v${magic} messages one entry each, keys, values and ${magic === 1 ? "timestamps" : "NO_TIMESTAMP"} kept`, async () => {
      // Prepare
      const specs = awkward(magic, (i) => 40 + i);
      // Act
      const batches = await decodeRecordBatches(Buffer.concat(specs.map(legacyMessage)));
      // Assess
      assert.deepEqual(
        batches.map((b) => [b.baseOffset, b.lastOffset, b.isControl, b.isTransactional]),
        specs.map((_, i) => [40 + i, 40 + i, false, false]),
      );
      assert.deepEqual(
        batches.flatMap((b) => b.records),
        expected(specs, (i) => 40 + i),
      );
    });
  }

  it("keeps a v1 message's own timestamp under LogAppendTime (the broker wrote it there)", async () => {
    const message = legacyMessage({
      magic: 1,
      offset: 3,
      timestamp: T0,
      logAppendTime: true,
      key: null,
      value: null,
    });
    const [batch] = await decodeRecordBatches(message);
    assert.deepEqual(batch?.records, [{ offset: 3, timestamp: T0, key: null, value: null, headers: [] }]);
  });

  it("reads legacy entries mixed with v2 batches and ignores a truncated trailing message", async () => {
    const v2 = await encodeRecordBatch(
      [{ offset: 0, timestamp: T0, key: null, value: Buffer.from("b"), headers: [] }],
      {
        compression: "none",
        producerId: -1n,
        producerEpoch: -1,
        baseSequence: -1,
      },
    );
    v2.writeBigInt64BE(2n, 0);
    v2.writeInt32BE(7, 12); // partitionLeaderEpoch
    const a = legacyMessage({ magic: 1, offset: 0, timestamp: T0, key: null, value: Buffer.from("a") });
    const a2 = legacyMessage({ magic: 1, offset: 1, timestamp: T0, key: null, value: Buffer.from("a2") });
    const c = legacyMessage({ magic: 0, offset: 3, key: null, value: Buffer.from("c") });
    for (const cut of [1, 12, 16, 17, c.length - 1]) {
      const set = Buffer.concat([a, a2, v2, c.subarray(0, cut)]);
      const batches = await decodeRecordBatches(set);
      assert.deepEqual(
        batches.map((b) => b.baseOffset),
        [0, 1, 2],
        `cut at ${cut}`,
      );
    }
    const batches = await decodeRecordBatches(Buffer.concat([a, a2, v2, c]));
    assert.deepEqual(
      batches.map((b) => b.records.map((r) => r.value?.toString())),
      [["a"], ["a2"], ["b"], ["c"]],
    );
    // A legacy message has no leader epoch (its bytes 12..15 are its CRC).
    assert.deepEqual(
      (await decodeRecordBatches(Buffer.concat([a, v2, c]))).map((b) => b.leaderEpoch),
      [-1, 7, -1],
    );
  });
});

describe("legacy message sets: compressed wrappers", () => {
  for (const codec of CODECS) {
    it(`v1 ${codec}: relative inner offsets end at the wrapper's offset; inner timestamps kept`, async () => {
      // Prepare: the broker gave this wrapper offsets 100..103, so its own offset is 103.
      const inner = awkward(1, (i) => i);
      const wrapper = legacyWrapper({ magic: 1, offset: 103, timestamp: T0 + 99 }, codec, inner);
      // Act
      const [batch, ...rest] = await decodeRecordBatches(wrapper);
      // Assess
      assert.equal(rest.length, 0);
      assert.deepEqual([batch?.baseOffset, batch?.lastOffset], [100, 103]);
      assert.deepEqual(
        batch?.records,
        expected(inner, (i) => 100 + i),
      );
    });

    it(`v0 ${codec}: absolute inner offsets, NO_TIMESTAMP`, async () => {
      const inner = awkward(0, (i) => 57 + i);
      const wrapper = legacyWrapper({ magic: 0, offset: 60 }, codec, inner);
      const [batch] = await decodeRecordBatches(wrapper);
      assert.deepEqual([batch?.baseOffset, batch?.lastOffset], [57, 60]);
      assert.deepEqual(
        batch?.records,
        expected(inner, (i) => 57 + i),
      );
    });
  }

  it("v1 LogAppendTime: the wrapper's timestamp is every inner message's", async () => {
    const inner = awkward(1, (i) => i);
    const wrapper = legacyWrapper(
      { magic: 1, offset: 3, timestamp: T0 + 5_000, logAppendTime: true },
      "gzip",
      inner,
    );
    const [batch] = await decodeRecordBatches(wrapper);
    assert.deepEqual(
      batch?.records.map((r) => r.timestamp),
      inner.map(() => T0 + 5_000),
    );
  });

  it("v1 wrapper whose inner offsets skip (compacted): absolute offsets keep the gaps", async () => {
    const inner = [0, 2, 5].map((offset) => ({
      magic: 1 as const,
      offset,
      timestamp: T0,
      key: null,
      value: null,
    }));
    const [batch] = await decodeRecordBatches(
      legacyWrapper({ magic: 1, offset: 15, timestamp: T0 }, "gzip", inner),
    );
    assert.deepEqual(
      batch?.records.map((r) => r.offset),
      [10, 12, 15],
    );
  });
});

describe("legacy records written as v2 (what the target gets)", () => {
  it("keeps NO_TIMESTAMP of v0 records next to v1 timestamps, keys and values, in one v2 batch", async () => {
    // Prepare: a v0 set and a v1 set, as a partition upgraded from 0.9 to 0.10 holds them.
    const v0 = awkward(0, (i) => i);
    const v1 = awkward(1, (i) => 4 + i);
    const read = (await decodeRecordBatches(Buffer.concat([...v0, ...v1].map(legacyMessage)))).flatMap(
      (b) => b.records,
    );
    // Act
    const copy = await encodeRecordBatch(read, {
      compression: "gzip",
      producerId: -1n,
      producerEpoch: -1,
      baseSequence: -1,
    });
    // Assess: the copy's records are the legacy ones (offsets renumbered from 0 by the encoder).
    const [batch] = await decodeRecordBatches(copy);
    assert.deepEqual(batch?.records, [...expected(v0, (i) => i), ...expected(v1, (i) => 4 + i)]);
    assert.equal(copy.readBigInt64BE(27), -1n, "firstTimestamp: the first record's NO_TIMESTAMP");
    assert.equal(copy.readBigInt64BE(35), BigInt(T0 + 21), "maxTimestamp: the largest v1 timestamp");
  });
});

describe("legacy message sets: refused with CORRUPT_BATCH", () => {
  const plain = legacyMessage({
    magic: 1,
    offset: 0,
    timestamp: T0,
    key: Buffer.from("k"),
    value: Buffer.from("v"),
  });

  it("any byte the CRC covers flipped, or the CRC itself", async () => {
    for (let at = 12; at < plain.length; at++) {
      const damaged = Buffer.from(plain);
      damaged[at] = (damaged[at] as number) ^ 0x01;
      if (at === 16) continue; // the magic byte: 0 is still legacy (CRC caught), checked below
      await assert.rejects(decodeRecordBatches(damaged), isCorrupt(/CRC mismatch/), `byte ${at}`);
    }
    const magic0 = Buffer.from(plain);
    magic0[16] = 0;
    await assert.rejects(decodeRecordBatches(magic0), isCorrupt(/CRC mismatch/));
  });

  it("a message whose sizes do not add up", async () => {
    const short = Buffer.from(plain);
    short.writeInt32BE(plain.length - 12 - 1, 8);
    const resummed = Buffer.from(short.subarray(0, short.length - 1));
    resummed.writeUInt32BE(crc32(resummed, 16), 12);
    await assert.rejects(decodeRecordBatches(resummed), isCorrupt(/runs past|does not match/));
  });

  it("zstd and unknown codec ids (v0/v1 define none, gzip, snappy, lz4 only)", async () => {
    for (const id of [4, 5, 7]) {
      const message = Buffer.from(plain);
      message[17] = id;
      message.writeUInt32BE(crc32(message, 16), 12);
      await assert.rejects(
        decodeRecordBatches(message),
        isCorrupt(new RegExp(`codec id ${id} is not allowed`)),
      );
    }
  });

  it("a wrapper whose value does not decompress", async () => {
    const message = Buffer.from(plain);
    message[17] = 1;
    message.writeUInt32BE(crc32(message, 16), 12);
    await assert.rejects(decodeRecordBatches(message), isCorrupt(/gzip decompression failed/));
  });

  it("nested compression, inner magic other than the wrapper's, inner offsets out of order", async () => {
    const empty = legacyWrapper({ magic: 1, offset: 0, timestamp: T0 }, "gzip", []);
    await assert.rejects(decodeRecordBatches(empty), isCorrupt(/holds no messages/));
    const inner = legacyWrapper({ magic: 1, offset: 0, timestamp: T0 }, "gzip", [
      { magic: 1, offset: 0, timestamp: T0, key: null, value: null },
    ]);
    const nested = legacyWrapper({ magic: 1, offset: 0, timestamp: T0 }, "snappy", [inner]);
    await assert.rejects(decodeRecordBatches(nested), isCorrupt(/compressed message inside/));
    const mixed = legacyWrapper({ magic: 1, offset: 1, timestamp: T0 }, "gzip", [
      { magic: 0, offset: 0, key: null, value: null },
    ]);
    await assert.rejects(decodeRecordBatches(mixed), isCorrupt(/magic 0 differs from its wrapper's 1/));
    const backwards = legacyWrapper({ magic: 0, offset: 9, timestamp: T0 }, "gzip", [
      { magic: 0, offset: 8, key: null, value: null },
      { magic: 0, offset: 8, key: null, value: null },
    ]);
    await assert.rejects(decodeRecordBatches(backwards), isCorrupt(/do not fit their wrapper/));
    const beyond = legacyWrapper({ magic: 0, offset: 9, timestamp: T0 }, "gzip", [
      { magic: 0, offset: 10, key: null, value: null },
    ]);
    await assert.rejects(decodeRecordBatches(beyond), isCorrupt(/do not fit their wrapper/));
  });
});

describe("crc32", () => {
  it("is zlib's CRC-32 (IEEE)", async () => {
    const { crc32: zlibCrc32 } = await import("node:zlib");
    const data = Buffer.from(Array.from({ length: 1000 }, (_, i) => (i * 31) & 0xff));
    assert.equal(crc32(data), zlibCrc32(data));
    assert.equal(crc32(data, 17, 900), zlibCrc32(data.subarray(17, 900)));
    assert.equal(crc32(Buffer.from("123456789")), 0xcbf43926);
  });
});
