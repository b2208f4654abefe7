import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { CompressionCodec } from "../../../../lib/config/compression.js";
import type { MirrorRecord, RecordHeader } from "../../../../lib/core/model.js";
import { encodeProvenance, stampFor } from "../../../../lib/core/provenance.js";
import { isReplicatorError } from "../../../../lib/errors.js";
import type { DecodedBatch } from "../../../../lib/kafka/codec/model.js";
import {
  decodeRecordBatches,
  type EncodeOptions,
  encodeRecordBatch,
} from "../../../../lib/kafka/codec/record-batch.js";
import { dropAborted } from "../../../../lib/kafka/read/read-committed.js";
import {
  KAFKAJS_GZIP,
  KAFKAJS_NONE,
  type KafkajsBatchInput,
  kafkajsCrc32c,
  kafkajsDecode,
  kafkajsEncode,
} from "./kafkajs-record-batch.js";

const CODECS: CompressionCodec[] = ["none", "gzip", "snappy", "lz4", "zstd"];
const PLAIN: EncodeOptions = { compression: "none", producerId: -1n, producerEpoch: -1, baseSequence: -1 };

const h = (key: string, value: Buffer | null): RecordHeader => ({ key: Buffer.from(key, "latin1"), value });

/** Records covering every byte-level case the replicator must preserve. Offsets are 0.. as encoded. */
function awkwardRecords(): MirrorRecord[] {
  const base = 1_700_000_000_000;
  const specs: Omit<MirrorRecord, "offset">[] = [
    { timestamp: base, key: Buffer.from("k1"), value: Buffer.from("v1"), headers: [] },
    { timestamp: base + 1, key: null, value: Buffer.from([0x00, 0xff, 0xfe]), headers: [] },
    { timestamp: base - 5_000_000_000, key: Buffer.from([0xc3, 0x28]), value: null, headers: [] },
    { timestamp: base + 2 ** 40, key: Buffer.alloc(0), value: Buffer.alloc(0), headers: [] },
    {
      timestamp: base,
      key: Buffer.from("interleaved"),
      value: Buffer.from("x"),
      headers: [
        h("A", Buffer.from([1])),
        h("B", null),
        h("A", Buffer.from([0xff, 0x00])),
        h("A", Buffer.alloc(0)),
      ],
    },
    {
      timestamp: 0,
      key: null,
      value: null,
      headers: [{ key: Buffer.from([0xff, 0xfe, 0x00]), value: Buffer.from([0x80, 0x81]) }, h("", null)],
    },
    { timestamp: -1, key: Buffer.from("negative"), value: Buffer.from("ts"), headers: [] },
  ];
  return specs.map((spec, offset) => ({ offset, ...spec }));
}

function manyRecords(count: number): MirrorRecord[] {
  return Array.from({ length: count }, (_, offset) => ({
    offset,
    timestamp: 1_700_000_000_000 + offset * 3,
    key: offset % 7 === 0 ? null : Buffer.from(`key-${offset}`),
    value: offset % 11 === 0 ? null : Buffer.alloc(100 + (offset % 50), offset & 0xff),
    headers:
      offset % 3 === 0
        ? [h("trace", Buffer.from([offset & 0xff])), h("n", null), h("trace", Buffer.alloc(0))]
        : [],
  }));
}

function only(batches: DecodedBatch[]): DecodedBatch {
  assert.equal(batches.length, 1);
  const [batch] = batches;
  assert.ok(batch);
  return batch;
}

function isCorrupt(pattern?: RegExp) {
  return (error: unknown): boolean =>
    isReplicatorError(error, "CORRUPT_BATCH") && (pattern === undefined || pattern.test(error.message));
}

interface Patch {
  baseOffset?: bigint;
  attributes?: number;
  maxTimestamp?: bigint;
  magic?: number;
  producerId?: bigint;
}

/** Rewrites header fields of an encoded batch and recomputes its CRC with kafkajs's CRC-32C. */
function patch(batch: Buffer, changes: Patch): Buffer {
  const out = Buffer.from(batch);
  if (changes.baseOffset !== undefined) out.writeBigInt64BE(changes.baseOffset, 0);
  if (changes.magic !== undefined) out.writeInt8(changes.magic, 16);
  if (changes.attributes !== undefined) out.writeInt16BE(changes.attributes, 21);
  if (changes.maxTimestamp !== undefined) out.writeBigInt64BE(changes.maxTimestamp, 35);
  if (changes.producerId !== undefined) out.writeBigInt64BE(changes.producerId, 43);
  out.writeUInt32BE(kafkajsCrc32c(out.subarray(21)), 17);
  return out;
}

const TRANSACTIONAL = 0x10;
const CONTROL = 0x20;

/** A control batch as a transaction coordinator writes it: key (version 0, type), value (version, epoch). */
async function controlBatch(
  baseOffset: number,
  producerId: bigint,
  type: "abort" | "commit",
): Promise<Buffer> {
  const key = Buffer.from([0, 0, 0, type === "abort" ? 0 : 1]);
  const value = Buffer.from([0, 0, 0, 0, 0, 7]);
  const encoded = await encodeRecordBatch([{ offset: 0, timestamp: 1, key, value, headers: [] }], PLAIN);
  return patch(encoded, { baseOffset: BigInt(baseOffset), attributes: TRANSACTIONAL | CONTROL, producerId });
}

async function transactionalBatch(baseOffset: number, producerId: bigint, count: number): Promise<Buffer> {
  const records = manyRecords(count);
  const encoded = await encodeRecordBatch(records, {
    ...PLAIN,
    producerId,
    producerEpoch: 0,
    baseSequence: 0,
  });
  return patch(encoded, { baseOffset: BigInt(baseOffset), attributes: TRANSACTIONAL });
}

describe("encodeRecordBatch + decodeRecordBatches", () => {
  for (const codec of CODECS) {
    it(`${codec}: round-trips keys, values, nulls, headers and timestamps exactly`, async () => {
      const records = awkwardRecords();
      const options: EncodeOptions = {
        compression: codec,
        producerId: 4242n,
        producerEpoch: 3,
        baseSequence: 17,
      };
      const encoded = await encodeRecordBatch(records, options);
      const batch = only(await decodeRecordBatches(encoded));
      assert.deepEqual(batch.records, records);
      assert.equal(batch.baseOffset, 0);
      assert.equal(batch.lastOffset, records.length - 1);
      assert.equal(batch.producerId, 4242n);
      assert.equal(batch.producerEpoch, 3);
      assert.equal(batch.baseSequence, 17);
      assert.equal(batch.isTransactional, false);
      assert.equal(batch.isControl, false);
      assert.equal(batch.controlType, null);
      assert.equal(batch.sizeInBytes, encoded.length);
    });

    it(`${codec}: round-trips a single record and 10,000 records`, async () => {
      for (const records of [manyRecords(1), manyRecords(10_000)]) {
        const encoded = await encodeRecordBatch(records, { ...PLAIN, compression: codec });
        const batch = only(await decodeRecordBatches(encoded));
        assert.equal(batch.records.length, records.length);
        assert.deepEqual(batch.records, records);
      }
    });
  }

  it("writes the attributes, epochs and timestamps a Java producer writes", async () => {
    const records = awkwardRecords();
    const encoded = await encodeRecordBatch(records, { ...PLAIN, compression: "lz4" });
    assert.equal(encoded.readBigInt64BE(0), 0n, "baseOffset");
    assert.equal(encoded.readInt32BE(8), encoded.length - 12, "batchLength");
    assert.equal(encoded.readInt32BE(12), -1, "partitionLeaderEpoch");
    assert.equal(encoded.readInt8(16), 2, "magic");
    assert.equal(encoded.readInt16BE(21), 3, "attributes: lz4, CreateTime, not transactional");
    assert.equal(encoded.readInt32BE(23), records.length - 1, "lastOffsetDelta");
    assert.equal(Number(encoded.readBigInt64BE(27)), records[0]?.timestamp, "baseTimestamp");
    assert.equal(
      Number(encoded.readBigInt64BE(35)),
      Math.max(...records.map((r) => r.timestamp)),
      "maxTimestamp",
    );
    assert.equal(encoded.readInt32BE(57), records.length, "record count");
  });

  for (const codec of CODECS) {
    it(`${codec}: isTransactional sets attributes bit 4 and changes no other byte but the CRC`, async () => {
      // Prepare
      const records = awkwardRecords();
      const options: EncodeOptions = {
        compression: codec,
        producerId: 42n,
        producerEpoch: 3,
        baseSequence: 0,
      };

      // Act
      const byDefault = await encodeRecordBatch(records, options);
      const plain = await encodeRecordBatch(records, { ...options, isTransactional: false });
      const transactional = await encodeRecordBatch(records, { ...options, isTransactional: true });

      // Assess
      assert.deepEqual(plain, byDefault, "isTransactional defaults to false");
      const attributes = 21;
      assert.equal(plain.readInt16BE(attributes) & 0x10, 0);
      assert.equal(transactional.readInt16BE(attributes), plain.readInt16BE(attributes) | 0x10);
      const outsideCrcAndAttributes = (b: Buffer) => Buffer.concat([b.subarray(0, 17), b.subarray(23)]);
      assert.deepEqual(outsideCrcAndAttributes(transactional), outsideCrcAndAttributes(plain));
      const decoded = only(await decodeRecordBatches(transactional)); // checks the new CRC too
      assert.deepEqual(
        [decoded.isTransactional, decoded.isControl, decoded.producerId, decoded.producerEpoch],
        [true, false, 42n, 3],
      );
      assert.deepEqual(decoded.records, only(await decodeRecordBatches(plain)).records);
    });
  }

  it("decodes uncompressed keys, values and headers as views of the fetched bytes", async () => {
    const encoded = await encodeRecordBatch(awkwardRecords(), PLAIN);
    const record = only(await decodeRecordBatches(encoded)).records[4];
    assert.equal(record?.key?.buffer, encoded.buffer);
    assert.equal(record?.headers[0]?.key.buffer, encoded.buffer);
    assert.equal(record?.headers[0]?.value?.buffer, encoded.buffer);
  });

  for (const codec of CODECS) {
    it(`${codec}: a stamp becomes every record's last header, the provenance of its source offset`, async () => {
      const records = awkwardRecords().map((r, i) => ({ ...r, offset: 2 ** 40 + i * 1000 }));
      const settings = {
        header: Buffer.from("kafka-mirror.provenance"),
        sourceAlias: "dc1",
        targetAlias: null,
      };

      const encoded = await encodeRecordBatch(records, {
        ...PLAIN,
        compression: codec,
        stamp: stampFor(settings, 6),
      });

      const decoded = only(await decodeRecordBatches(encoded)).records;
      assert.deepEqual(
        decoded.map((r) => r.headers),
        records.map((r) => [
          ...r.headers,
          { key: settings.header, value: encodeProvenance({ alias: "dc1", partition: 6, offset: r.offset }) },
        ]),
      );
      assert.deepEqual(
        decoded.map(({ headers, offset, ...rest }) => rest),
        records.map(({ headers, offset, ...rest }) => rest),
      );
    });
  }

  it("leaves the headroom asked for in front of the batch, and sums the batch alone", async () => {
    const plain = await encodeRecordBatch(awkwardRecords(), PLAIN);
    const roomy = await encodeRecordBatch(awkwardRecords(), { ...PLAIN, headroom: 29 });

    assert.equal(roomy.length, 29 + plain.length);
    assert.deepEqual(roomy.subarray(29), plain);
  });

  it("refuses to encode no records or timestamps 2^53 ms apart", async () => {
    await assert.rejects(encodeRecordBatch([], PLAIN), RangeError);
    const far = [
      { offset: 0, timestamp: Number.MIN_SAFE_INTEGER, key: null, value: null, headers: [] },
      { offset: 1, timestamp: Number.MAX_SAFE_INTEGER, key: null, value: null, headers: [] },
    ];
    await assert.rejects(encodeRecordBatch(far, PLAIN), RangeError);
  });
});

describe("cross-check with kafkajs's record batch codec", () => {
  const firstTimestamp = 1_600_000_000_000;
  const kafkajsRecords: KafkajsBatchInput["records"] = [
    { offsetDelta: 0, timestampDelta: 0, key: Buffer.from("a"), value: Buffer.from([0, 1, 2]), headers: {} },
    // kafkajs 2.2.4 cannot encode a null header value, so none here.
    {
      offsetDelta: 1,
      timestampDelta: -3_000_000_000,
      key: null,
      value: null,
      headers: { h: Buffer.alloc(0) },
    },
    {
      offsetDelta: 2,
      timestampDelta: 5,
      key: Buffer.alloc(0),
      value: Buffer.alloc(0),
      headers: { first: Buffer.from([0xff]), rep: [Buffer.from([1]), Buffer.from([2])] },
    },
    {
      offsetDelta: 4,
      timestampDelta: 2 ** 33,
      key: Buffer.from("gap"),
      value: Buffer.from("after compaction"),
    },
  ];

  for (const [name, compression] of [
    ["none", KAFKAJS_NONE],
    ["gzip", KAFKAJS_GZIP],
  ] as const) {
    it(`decodes a ${name} batch kafkajs encoded`, async () => {
      const encoded = await kafkajsEncode({
        compression,
        firstOffset: "1000",
        firstTimestamp,
        maxTimestamp: firstTimestamp + 2 ** 33,
        lastOffsetDelta: 4,
        producerId: "77",
        producerEpoch: 2,
        firstSequence: 9,
        records: kafkajsRecords,
      });
      const batch = only(await decodeRecordBatches(encoded));
      assert.equal(batch.baseOffset, 1000);
      assert.equal(batch.lastOffset, 1004);
      assert.equal(batch.producerId, 77n);
      assert.equal(batch.producerEpoch, 2);
      assert.equal(batch.baseSequence, 9);
      assert.deepEqual(batch.records, [
        {
          offset: 1000,
          timestamp: firstTimestamp,
          key: Buffer.from("a"),
          value: Buffer.from([0, 1, 2]),
          headers: [],
        },
        {
          offset: 1001,
          timestamp: firstTimestamp - 3_000_000_000,
          key: null,
          value: null,
          headers: [h("h", Buffer.alloc(0))],
        },
        {
          offset: 1002,
          timestamp: firstTimestamp + 5,
          key: Buffer.alloc(0),
          value: Buffer.alloc(0),
          headers: [h("first", Buffer.from([0xff])), h("rep", Buffer.from([1])), h("rep", Buffer.from([2]))],
        },
        {
          offset: 1004,
          timestamp: firstTimestamp + 2 ** 33,
          key: Buffer.from("gap"),
          value: Buffer.from("after compaction"),
          headers: [],
        },
      ]);
    });

    it(`kafkajs decodes a ${name} batch we encoded, and agrees with our CRC`, async () => {
      const records = awkwardRecords();
      const encoded = await encodeRecordBatch(records, {
        compression: name,
        producerId: 5n,
        producerEpoch: 1,
        baseSequence: 100,
      });
      assert.equal(encoded.readUInt32BE(17), kafkajsCrc32c(encoded.subarray(21)));
      const decoded = await kafkajsDecode(encoded);
      assert.equal(decoded.producerId, "5");
      assert.equal(decoded.firstSequence, 100);
      assert.equal(decoded.records.length, records.length);
      decoded.records.forEach((theirs, i) => {
        const ours = records[i];
        assert.ok(ours);
        assert.equal(theirs.offset, String(ours.offset));
        assert.equal(theirs.timestamp, String(ours.timestamp));
        assert.deepEqual(theirs.key, ours.key);
        assert.deepEqual(theirs.value, ours.value);
        // kafkajs folds headers into an object keyed by UTF-8 strings (the reason we have our own
        // codec), so compare through the same lossy view.
        const folded: Record<string, Buffer | null | (Buffer | null)[]> = {};
        for (const header of ours.headers) {
          const name = header.key.toString("utf8");
          const seen = folded[name];
          folded[name] =
            seen === undefined
              ? header.value
              : Array.isArray(seen)
                ? [...seen, header.value]
                : [seen, header.value];
        }
        assert.deepEqual(theirs.headers, folded);
      });
    });
  }
});

describe("decodeRecordBatches on a fetched record set", () => {
  it("decodes consecutive batches and ignores a truncated trailing batch, wherever it is cut", async () => {
    const first = patch(await encodeRecordBatch(manyRecords(3), PLAIN), { baseOffset: 10n });
    const second = patch(await encodeRecordBatch(manyRecords(2), { ...PLAIN, compression: "gzip" }), {
      baseOffset: 13n,
    });
    const third = await encodeRecordBatch(manyRecords(4), PLAIN);
    const all = await decodeRecordBatches(Buffer.concat([first, second, third]));
    assert.deepEqual(
      all.map((b) => [b.baseOffset, b.lastOffset, b.records.length]),
      [
        [10, 12, 3],
        [13, 14, 2],
        [0, 3, 4],
      ],
    );
    for (const cut of [1, 11, 12, 60, 61, third.length - 1]) {
      const set = Buffer.concat([first, second, third.subarray(0, cut)]);
      const batches = await decodeRecordBatches(set);
      assert.deepEqual(
        batches.map((b) => b.baseOffset),
        [10, 13],
        `cut at ${cut}`,
      );
    }
    assert.deepEqual(await decodeRecordBatches(Buffer.alloc(0)), []);
  });

  it("throws CORRUPT_BATCH when any byte covered by the CRC is flipped", async () => {
    const encoded = await encodeRecordBatch(awkwardRecords(), { ...PLAIN, compression: "snappy" });
    for (const at of [21, 40, 61, encoded.length - 1]) {
      const damaged = Buffer.from(encoded);
      damaged[at] = (damaged[at] as number) ^ 0x01;
      await assert.rejects(decodeRecordBatches(damaged), isCorrupt(/CRC/), `byte ${at}`);
    }
  });

  it("throws CORRUPT_BATCH for an unknown codec id even with a valid CRC", async () => {
    const encoded = patch(await encodeRecordBatch(manyRecords(2), PLAIN), { attributes: 5 });
    await assert.rejects(decodeRecordBatches(encoded), isCorrupt(/codec/));
  });

  it("hands magic 0/1 entries to the legacy decoder and refuses other magics", async () => {
    // A v2 batch relabelled magic 1: read as a legacy message, whose CRC-32 (bytes 12..15) fails.
    const v1 = patch(await encodeRecordBatch(manyRecords(1), PLAIN), { magic: 1 });
    await assert.rejects(decodeRecordBatches(v1), isCorrupt(/message CRC mismatch/));
    const v3 = patch(await encodeRecordBatch(manyRecords(1), PLAIN), { magic: 3 });
    await assert.rejects(decodeRecordBatches(v3), isCorrupt(/unknown record batch magic 3/));
  });

  it("throws CORRUPT_BATCH rather than round an offset beyond Number.MAX_SAFE_INTEGER", async () => {
    const encoded = patch(await encodeRecordBatch(manyRecords(2), PLAIN), { baseOffset: 2n ** 53n });
    await assert.rejects(decodeRecordBatches(encoded), isCorrupt(/MAX_SAFE_INTEGER/));
  });

  it("gives every record the batch's maxTimestamp under LogAppendTime", async () => {
    const records = awkwardRecords();
    const appendTime = 1_800_000_000_123n;
    const encoded = patch(await encodeRecordBatch(records, { ...PLAIN, compression: "zstd" }), {
      attributes: 0x08 | 4,
      maxTimestamp: appendTime,
    });
    const batch = only(await decodeRecordBatches(encoded));
    assert.deepEqual(
      batch.records.map((r) => r.timestamp),
      records.map(() => Number(appendTime)),
    );
  });

  it("returns control batches without records but with their marker type", async () => {
    const set = Buffer.concat([await controlBatch(7, 3n, "abort"), await controlBatch(8, 3n, "commit")]);
    const [abort, commit] = await decodeRecordBatches(set);
    assert.deepEqual(
      [abort?.isControl, abort?.isTransactional, abort?.controlType, abort?.records, abort?.lastOffset],
      [true, true, "abort", [], 7],
    );
    assert.deepEqual([commit?.controlType, commit?.records], ["commit", []]);
  });
});

describe("dropAborted", () => {
  it("drops an aborted transaction's records and keeps a committed one interleaved with it", async () => {
    const set = Buffer.concat([
      await transactionalBatch(0, 1n, 2), // producer 1, aborted below
      await transactionalBatch(2, 2n, 2), // producer 2, committed
      await transactionalBatch(4, 1n, 1), // producer 1, same aborted transaction
      await controlBatch(5, 1n, "abort"),
      await controlBatch(6, 2n, "commit"),
      await encodeRecordBatch(manyRecords(1), PLAIN).then((b) => patch(b, { baseOffset: 7n })), // not transactional
      await transactionalBatch(8, 1n, 2), // producer 1's next transaction, committed
      await controlBatch(10, 1n, "commit"),
    ]);
    const batches = await decodeRecordBatches(set);
    const kept = dropAborted(batches, [{ producerId: 1n, firstOffset: 0 }]);
    assert.deepEqual(
      kept.map((b) => [b.baseOffset, b.records.length]),
      [
        [0, 0],
        [2, 2],
        [4, 0],
        [5, 0],
        [6, 0],
        [7, 1],
        [8, 2],
        [10, 0],
      ],
    );
    assert.deepEqual(
      kept.map((b) => b.lastOffset),
      batches.map((b) => b.lastOffset),
      "offset accounting is unchanged",
    );
    assert.equal(batches[0]?.records.length, 2, "the input batches are not modified");
  });

  it("starts an aborted transaction at its firstOffset, not before, and sorts the list", async () => {
    const set = Buffer.concat([
      await transactionalBatch(0, 1n, 2),
      await controlBatch(2, 1n, "commit"),
      await transactionalBatch(3, 1n, 2),
      await transactionalBatch(5, 9n, 1),
      await controlBatch(6, 1n, "abort"),
      await controlBatch(7, 9n, "abort"),
    ]);
    const kept = dropAborted(await decodeRecordBatches(set), [
      { producerId: 9n, firstOffset: 5 },
      { producerId: 1n, firstOffset: 3 },
    ]);
    assert.deepEqual(
      kept.map((b) => b.records.length),
      [2, 0, 0, 0, 0, 0],
    );
  });

  it("returns the batches untouched when nothing was aborted", async () => {
    const batches = await decodeRecordBatches(await transactionalBatch(0, 1n, 3));
    assert.equal(dropAborted(batches, []), batches);
  });
});
