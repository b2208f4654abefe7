// Source batches for target.copy "batches" (lib/kafka/codec/pass-through.ts): what passes as it
// came (the very bytes), and each case the reader encodes again from the records it keeps: a batch
// that begins before the offset asked for, one with compaction gaps, one with LogAppendTime, a
// magic 0/1 message set. Gapped batches come from kafkajs's encoder and legacy ones from
// test/helpers/legacy-message-set.ts, so neither shares code with ours.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { gzipSync } from "node:zlib";
import type { CompressionCodec } from "../../../../lib/config/compression.js";
import type { MirrorRecord, SourceBatch } from "../../../../lib/core/model.js";
import { isReplicatorError } from "../../../../lib/errors.js";
import { crc32c } from "../../../../lib/kafka/codec/crc32c.js";
import {
  contentCrc,
  rewriteForProduce,
  scanRecordSet,
  sourceBatchOf,
  uncompressedContentCrc,
} from "../../../../lib/kafka/codec/pass-through.js";
import { decodeRecordBatches, encodeRecordBatch } from "../../../../lib/kafka/codec/record-batch.js";
import { legacyMessage, legacyWrapper } from "../../../helpers/legacy-message-set.js";
import { KAFKAJS_GZIP, KAFKAJS_NONE, kafkajsEncode } from "./kafkajs-record-batch.js";

const T0 = 1_700_000_000_000;
const CODECS: CompressionCodec[] = ["none", "gzip", "snappy", "lz4", "zstd"];

function records(first: number, count: number): MirrorRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    offset: first + i,
    timestamp: T0 + 10 * i,
    key: i % 3 === 0 ? null : Buffer.from([0xff, i]),
    value: Buffer.from(`value-${first + i}`),
    headers: i % 2 === 0 ? [{ key: Buffer.from("h"), value: Buffer.from([i]) }] : [],
  }));
}

/** A batch as a broker stores it: at `baseOffset`, leader epoch 4, written by producer 42. */
async function stored(
  batchRecords: readonly MirrorRecord[],
  codec: CompressionCodec = "none",
): Promise<Buffer> {
  const batch = await encodeRecordBatch(batchRecords, {
    compression: codec,
    producerId: 42n,
    producerEpoch: 3,
    baseSequence: 17,
    isTransactional: true,
  });
  batch.writeBigInt64BE(BigInt(batchRecords[0]?.offset ?? 0), 0);
  batch.writeInt32BE(4, 12);
  return batch;
}

/** `batch` with its CRC computed again after a test changed it. */
function resealed(batch: Buffer): Buffer {
  batch.writeUInt32BE(crc32c(batch, 21, batch.length), 17);
  return batch;
}

async function onlyScanned(data: Buffer) {
  const [scanned, ...rest] = await scanRecordSet(data);
  assert.ok(scanned);
  assert.equal(rest.length, 0);
  return scanned;
}

async function unitOf(data: Buffer, offset: number, codec?: CompressionCodec): Promise<SourceBatch> {
  const unit = await sourceBatchOf(await onlyScanned(data), offset, codec);
  assert.ok(unit);
  return unit;
}

/** What a copy keeps of records: timestamps, keys, values, headers (not offsets). */
function content(rs: readonly MirrorRecord[]) {
  return rs.map(({ timestamp, key, value, headers }) => ({ timestamp, key, value, headers }));
}

/** Checks `unit` was encoded again as the brief says and returns its records as decoded. */
async function assertEncodedAgain(unit: SourceBatch, codecId: number): Promise<MirrorRecord[]> {
  const { bytes } = unit;
  assert.equal(bytes.readBigInt64BE(0), 0n, "baseOffset 0");
  assert.equal(bytes.readInt16BE(21), codecId, "the source's codec, CreateTime, not transactional");
  assert.equal(bytes.readBigInt64BE(43), -1n, "no producer id");
  assert.equal(bytes.readInt16BE(51), -1, "no producer epoch");
  assert.equal(bytes.readInt32BE(53), -1, "no base sequence");
  assert.equal(unit.contentCrc, bytes.readUInt32BE(17), "contentCrc: its own CRC, having no producer");
  const [decoded] = await decodeRecordBatches(bytes);
  assert.ok(decoded);
  assert.deepEqual(
    decoded.records.map((r) => r.offset),
    decoded.records.map((_, i) => i),
    "offset deltas 0..n-1",
  );
  assert.equal(unit.count, decoded.records.length);
  assert.equal(unit.maxTimestamp, Math.max(...decoded.records.map((r) => r.timestamp)));
  return decoded.records;
}

describe("scanRecordSet and sourceBatchOf", () => {
  for (const codec of CODECS) {
    it(`passes a whole ${codec} batch as it came: the same bytes, its header's producer and max timestamp`, async () => {
      // Prepare
      const batch = await stored(records(100, 5), codec);

      // Act
      const unit = await unitOf(batch, 100);

      // Assess
      assert.deepEqual(unit.bytes, batch);
      assert.equal(unit.bytes.buffer, batch.buffer, "a view of the fetched bytes, not a copy");
      assert.equal(unit.baseOffset, 100);
      assert.equal(unit.lastOffset, 104);
      assert.equal(unit.count, 5);
      assert.equal(unit.maxTimestamp, T0 + 40);
      assert.equal(unit.producerId, 42n);
      assert.equal(unit.contentCrc, contentCrc(batch));
    });
  }

  for (const codec of ["none", "zstd"] as const) {
    it(`encodes again the records at or after the offset of a ${codec} batch that begins before it`, async () => {
      // Prepare
      const source = records(100, 5);
      const batch = await stored(source, codec);

      // Act
      const unit = await unitOf(batch, 102);

      // Assess
      assert.equal(unit.baseOffset, 102);
      assert.equal(unit.lastOffset, 104);
      assert.equal(unit.producerId, 42n, "the source batch's producer, for the look at the target");
      const copied = await assertEncodedAgain(unit, codec === "none" ? 0 : 4);
      assert.deepEqual(content(copied), content(source.slice(2)));
    });
  }

  it("keeps nothing of a batch whose records all lie before the offset", async () => {
    const scanned = await onlyScanned(await stored(records(100, 5)));

    assert.equal(await sourceBatchOf(scanned, 105), null);
  });

  for (const [name, compression, codecId] of [
    ["none", KAFKAJS_NONE, 0],
    ["gzip", KAFKAJS_GZIP, 1],
  ] as const) {
    it(`encodes again a ${name} batch with compaction gaps: Kafka refuses its offset range as a produce`, async () => {
      // Prepare: offsets 200..209 of which compaction left 200, 203, 204 and 209.
      const kept = [0, 3, 4, 9];
      const batch = await kafkajsEncode({
        compression,
        firstOffset: "200",
        firstTimestamp: T0,
        maxTimestamp: T0 + 9,
        lastOffsetDelta: 9,
        producerId: "42",
        producerEpoch: 1,
        firstSequence: 0,
        records: kept.map((delta) => ({
          offsetDelta: delta,
          timestampDelta: delta,
          key: Buffer.from([delta]),
          value: Buffer.from(`v${delta}`),
        })),
      });

      // Act
      const scanned = await onlyScanned(batch);
      const unit = await sourceBatchOf(scanned, 200);

      // Assess
      assert.equal(scanned.whole, false);
      assert.equal(scanned.lastOffset, 209);
      assert.ok(unit);
      assert.deepEqual([unit.baseOffset, unit.lastOffset, unit.count], [200, 209, 4]);
      const copied = await assertEncodedAgain(unit, codecId);
      assert.deepEqual(
        copied.map((r) => [r.timestamp, r.key, r.value?.toString("latin1")]),
        kept.map((delta) => [T0 + delta, Buffer.from([delta]), `v${delta}`]),
      );
    });
  }

  it("encodes again a LogAppendTime batch as CreateTime, each record at the broker's append time", async () => {
    // Prepare: the broker's append time stands in maxTimestamp for every record.
    const source = records(300, 3);
    const batch = await stored(source, "lz4");
    batch.writeInt16BE(batch.readInt16BE(21) | 0x08, 21);
    batch.writeBigInt64BE(BigInt(T0 + 5_000), 35);
    resealed(batch);

    // Act
    const unit = await unitOf(batch, 300);

    // Assess
    const copied = await assertEncodedAgain(unit, 3);
    assert.deepEqual(
      copied.map((r) => r.timestamp),
      [T0 + 5_000, T0 + 5_000, T0 + 5_000],
    );
    assert.deepEqual(
      copied.map((r) => r.value),
      source.map((r) => r.value),
    );
  });

  it("encodes again magic 0 and 1 messages as v2 batches in their own codec", async () => {
    // Prepare: a plain v0 message at 7, then a v1 gzip wrapper of offsets 8-9 (relative inner offsets).
    const v0 = legacyMessage({ magic: 0, offset: 7, key: Buffer.from("k7"), value: Buffer.from("v7") });
    const v1 = legacyWrapper({ magic: 1, offset: 9, timestamp: T0 }, "gzip", [
      { magic: 1, offset: 0, timestamp: T0 + 1, key: null, value: Buffer.from("v8") },
      { magic: 1, offset: 1, timestamp: T0 + 2, key: Buffer.from("k9"), value: null },
    ]);

    // Act
    const scanned = await scanRecordSet(Buffer.concat([v0, v1]));
    const units = await Promise.all(scanned.map((s) => sourceBatchOf(s, 7)));

    // Assess
    const [plain, wrapped] = units;
    assert.ok(plain && wrapped);
    assert.deepEqual([plain.baseOffset, plain.lastOffset, plain.producerId], [7, 7, -1n]);
    assert.deepEqual(content(await assertEncodedAgain(plain, 0)), [
      { timestamp: -1, key: Buffer.from("k7"), value: Buffer.from("v7"), headers: [] },
    ]);
    assert.deepEqual([wrapped.baseOffset, wrapped.lastOffset], [8, 9]);
    assert.deepEqual(content(await assertEncodedAgain(wrapped, 1)), [
      { timestamp: T0 + 1, key: null, value: Buffer.from("v8"), headers: [] },
      { timestamp: T0 + 2, key: Buffer.from("k9"), value: null, headers: [] },
    ]);
  });

  it("reads a control batch's marker and never makes it a source batch", async () => {
    // Prepare: an ABORT marker of producer 42: key (version 0, type 0), attributes transactional | control.
    const marker = await stored([
      { offset: 50, timestamp: T0, key: Buffer.from([0, 0, 0, 0]), value: Buffer.alloc(6), headers: [] },
    ]);
    marker.writeInt16BE(0x30, 21);
    resealed(marker);

    // Act
    const scanned = await onlyScanned(marker);

    // Assess
    assert.deepEqual(
      [scanned.isControl, scanned.controlType, scanned.producerId, scanned.lastOffset],
      [true, "abort", 42n, 50],
    );
    await assert.rejects(sourceBatchOf(scanned, 50), RangeError);
  });

  it("refuses a batch whose CRC does not match, and an unknown codec, as CORRUPT_BATCH", async () => {
    const flipped = await stored(records(0, 2));
    flipped[flipped.length - 1] = (flipped[flipped.length - 1] as number) ^ 1;
    const unknownCodec = await stored(records(0, 2));
    unknownCodec.writeInt16BE(unknownCodec.readInt16BE(21) | 0x07, 21);
    resealed(unknownCodec);

    await assert.rejects(
      scanRecordSet(flipped),
      (e) => isReplicatorError(e, "CORRUPT_BATCH") && /CRC/.test(e.message),
    );
    await assert.rejects(
      scanRecordSet(unknownCodec),
      (e) => isReplicatorError(e, "CORRUPT_BATCH") && /codec/.test(e.message),
    );
  });

  it("leaves out a truncated trailing batch, as the decoder does", async () => {
    const first = await stored(records(0, 2));
    const second = await stored(records(2, 2));

    const scanned = await scanRecordSet(Buffer.concat([first, second.subarray(0, second.length - 3)]));

    assert.deepEqual(
      scanned.map((s) => s.baseOffset),
      [0],
    );
  });
});

describe("sourceBatchOf with target.compression: every batch in that codec", () => {
  const CODEC_IDS: Readonly<Record<CompressionCodec, number>> = {
    none: 0,
    gzip: 1,
    snappy: 2,
    lz4: 3,
    zstd: 4,
  };
  const TARGET_CODECS = CODECS.filter((c) => c !== "none");
  /** SourceReader.contentCrc: computed where sourceBatchOf left it null. */
  const crcOf = async (unit: SourceBatch) => unit.contentCrc ?? uncompressedContentCrc(unit.bytes);

  /** `unit` as the target stores it: our producer's fields, the broker's offset and leader epoch. */
  function copyOf(unit: SourceBatch, baseOffset: bigint): Buffer {
    const fields = { producerId: 9n, producerEpoch: 1, baseSequence: 0, transactional: true };
    const copy = Buffer.concat(rewriteForProduce(unit.bytes, fields));
    copy.writeBigInt64BE(baseOffset, 0);
    copy.writeInt32BE(7, 12);
    return copy;
  }

  /** Header bytes a recompression keeps: all but the length, the CRC and the codec bits. */
  function keptHeader(batch: Buffer): Buffer {
    const header = Buffer.from(batch.subarray(0, 61));
    header.fill(0, 8, 12);
    header.fill(0, 17, 21);
    header.writeInt16BE(header.readInt16BE(21) & ~0x07, 21);
    return header;
  }

  for (const from of CODECS) {
    for (const to of TARGET_CODECS) {
      it(`sends a whole ${from} batch in ${to}: its records and header kept, matched by its copy's content CRC`, async () => {
        // Prepare
        const source = records(100, 5);
        const batch = await stored(source, from);
        const plain = await unitOf(await stored(source, "none"), 100, to);

        // Act
        const unit = await unitOf(batch, 100, to);

        // Assess
        assert.equal(unit.bytes.readInt16BE(21) & 0x07, CODEC_IDS[to]);
        // A batch in the codec already passes as it came: a view of the fetched bytes.
        const view = unit.bytes.buffer === batch.buffer && unit.bytes.byteOffset === batch.byteOffset;
        assert.equal(view, from === to);
        assert.deepEqual(keptHeader(unit.bytes), keptHeader(batch));
        const [decoded] = await decodeRecordBatches(unit.bytes);
        assert.deepEqual(content(decoded?.records ?? []), content(source));
        assert.deepEqual(
          decoded?.records.map((r) => r.offset),
          [100, 101, 102, 103, 104],
        );
        assert.equal([unit.count, unit.maxTimestamp, unit.producerId].join(), [5, T0 + 40, 42n].join());
        // Left to be computed for a batch in the codec already: only a look or verify needs it.
        assert.equal(unit.contentCrc === null, from === to);
        assert.equal(await crcOf(unit), await crcOf(plain), "the same records in any source codec");
        const copied = await unitOf(copyOf(unit, 7_000n), 0, to);
        assert.equal(await crcOf(copied), await crcOf(unit), "the copy, as the target holds it");
      });
    }
  }

  it("matches a copy another compressor made, and not one whose records differ", async () => {
    // Prepare: the source's records gzipped at level 1, as another zlib or setting might.
    const source = records(100, 20);
    const uncompressed = await stored(source, "none");
    const unit = await unitOf(uncompressed, 100, "gzip");
    const other = Buffer.concat([
      uncompressed.subarray(0, 61),
      gzipSync(uncompressed.subarray(61), { level: 1 }),
    ]);
    other.writeInt32BE(other.length - 12, 8);
    other.writeInt16BE(other.readInt16BE(21) | 1, 21);
    const altered = records(100, 20);
    altered[7] = { ...(altered[7] as MirrorRecord), value: Buffer.from("value-1O7") };

    // Act
    const elsewhere = await unitOf(resealed(other), 100, "gzip");
    const differing = await unitOf(await stored(altered, "gzip"), 100, "gzip");

    // Assess
    assert.notDeepEqual(elsewhere.bytes.subarray(61), unit.bytes.subarray(61), "another compressor's bytes");
    assert.equal(await crcOf(elsewhere), await crcOf(unit));
    assert.notEqual(await crcOf(differing), await crcOf(unit));
  });

  it("passes a batch in the codec that does not decompress as it came, matched by its bytes; one in another codec stops", async () => {
    // Prepare: a zstd batch whose compressed section is cut short, its CRC made valid again.
    const whole = await stored(records(100, 5), "zstd");
    const broken = resealed(Buffer.from(whole.subarray(0, whole.length - 8)));
    broken.writeInt32BE(broken.length - 12, 8);

    // Act
    const unit = await unitOf(broken, 100, "zstd");
    const copied = await unitOf(copyOf(unit, 7_000n), 0, "zstd");

    // Assess: as with no codec set, nothing decompressed; the look or verify does not stop on it.
    assert.deepEqual(unit.bytes, broken);
    assert.equal(await crcOf(unit), contentCrc(broken));
    assert.equal(await crcOf(copied), await crcOf(unit));
    await assert.rejects(unitOf(broken, 100, "lz4"), (error) => isReplicatorError(error, "CORRUPT_BATCH"));
  });

  it("encodes again, in the target's codec, the records at or after the offset of a batch that begins before it", async () => {
    // Prepare
    const source = records(100, 5);
    const batch = await stored(source, "lz4");

    // Act
    const unit = await unitOf(batch, 102, "zstd");

    // Assess
    assert.equal(unit.bytes.readInt16BE(21), CODEC_IDS.zstd, "zstd, CreateTime, not transactional");
    assert.deepEqual(
      [unit.baseOffset, unit.lastOffset, unit.count, unit.bytes.readBigInt64BE(43)],
      [102, 104, 3, -1n],
    );
    const [decoded] = await decodeRecordBatches(unit.bytes);
    assert.deepEqual(content(decoded?.records ?? []), content(source.slice(2)));
    assert.equal(await crcOf(unit), await crcOf(await unitOf(copyOf(unit, 0n), 0, "zstd")));
  });
});
