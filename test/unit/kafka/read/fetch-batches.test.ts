// fetchBatches' shaping of one fetched partition (lib/kafka/read/fetch-batches.ts) against fetch's
// (fetch-result.ts) on the same record set: the same data, the same nextOffset and epochs from
// every offset, read_committed and read_uncommitted; control batches and aborted transactions
// dropped by header alone; limits that stop before a batch, never inside one.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { CompressionCodec } from "../../../../lib/config/compression.js";
import type { MirrorRecord, SourceBatch } from "../../../../lib/core/model.js";
import { isReplicatorError } from "../../../../lib/errors.js";
import { crc32c } from "../../../../lib/kafka/codec/crc32c.js";
import { type CrcCheck, scanRecordSet } from "../../../../lib/kafka/codec/pass-through.js";
import { decodeRecordBatches, encodeRecordBatch } from "../../../../lib/kafka/codec/record-batch.js";
import { sliceBatches } from "../../../../lib/kafka/read/fetch-batches.js";
import { epochsOf, slicePartition } from "../../../../lib/kafka/read/fetch-result.js";
import { abortedBatches, dropAborted } from "../../../../lib/kafka/read/read-committed.js";
import { KAFKAJS_NONE, kafkajsEncode } from "../codec/kafkajs-record-batch.js";

const T0 = 1_700_000_000_000;

interface Layout {
  readonly producerId: bigint;
  readonly epoch: number;
  readonly transactional?: boolean;
  readonly codec?: CompressionCodec;
  /** attributes 0x30 and one control record of this type. */
  readonly control?: "abort" | "commit";
}

/** A batch as a broker stores it at `first`, of `count` records (one for a control batch). */
async function batchAt(first: number, count: number, layout: Layout): Promise<Buffer> {
  const records: MirrorRecord[] =
    layout.control === undefined
      ? Array.from({ length: count }, (_, i) => ({
          offset: first + i,
          timestamp: T0 + first + i,
          key: Buffer.from([first + i]),
          value: Buffer.from(`value-${first + i}`),
          headers: [{ key: Buffer.from("n"), value: Buffer.from([i]) }],
        }))
      : [
          {
            offset: first,
            timestamp: T0,
            key: Buffer.from([0, 0, 0, layout.control === "commit" ? 1 : 0]),
            value: Buffer.alloc(6),
            headers: [],
          },
        ];
  const batch = await encodeRecordBatch(records, {
    compression: layout.codec ?? "none",
    producerId: layout.producerId,
    producerEpoch: 0,
    baseSequence: layout.control === undefined ? 0 : -1,
    isTransactional: layout.transactional === true || layout.control !== undefined,
  });
  if (layout.control !== undefined) {
    batch.writeInt16BE(0x30, 21);
    batch.writeUInt32BE(crc32c(batch, 21, batch.length), 17);
  }
  batch.writeBigInt64BE(BigInt(first), 0);
  batch.writeInt32BE(layout.epoch, 12);
  return batch;
}

/** Offsets 11..15 of which compaction left 11, 13 and 15 (kafkajs's encoder writes the gaps). */
async function gappedAt11(): Promise<Buffer> {
  const batch = await kafkajsEncode({
    compression: KAFKAJS_NONE,
    firstOffset: "11",
    firstTimestamp: T0 + 11,
    maxTimestamp: T0 + 15,
    lastOffsetDelta: 4,
    records: [0, 2, 4].map((delta) => ({
      offsetDelta: delta,
      timestampDelta: delta,
      key: Buffer.from([11 + delta]),
      value: Buffer.from(`value-${11 + delta}`),
    })),
  });
  batch.writeInt32BE(2, 12);
  return batch;
}

/**
 * 0-4 data (epoch 1, gzip), 5-6 transactional of producer 7 then its ABORT at 7, 8-9
 * transactional of producer 8 then its COMMIT at 10 (epoch 2), 11-15 with compaction gaps,
 * 16-18 data (epoch 3, zstd).
 */
async function recordSet(): Promise<Buffer> {
  return Buffer.concat(await recordSetBatches());
}

/** recordSet's batches, one buffer each. */
async function recordSetBatches(): Promise<Buffer[]> {
  return [
    await batchAt(0, 5, { producerId: 42n, epoch: 1, codec: "gzip" }),
    await batchAt(5, 2, { producerId: 7n, epoch: 1, transactional: true }),
    await batchAt(7, 1, { producerId: 7n, epoch: 1, control: "abort" }),
    await batchAt(8, 2, { producerId: 8n, epoch: 2, transactional: true, codec: "snappy" }),
    await batchAt(10, 1, { producerId: 8n, epoch: 2, control: "commit" }),
    await gappedAt11(),
    await batchAt(16, 3, { producerId: 42n, epoch: 3, codec: "zstd" }),
  ];
}

const ABORTED = [{ producerId: 7n, firstOffset: 5 }];
const NO_LIMIT = { maxRecords: Number.MAX_SAFE_INTEGER, maxBytes: Number.MAX_SAFE_INTEGER, first: true };

function content(rs: readonly MirrorRecord[]) {
  return rs.map(({ timestamp, key, value, headers }) => ({ timestamp, key, value, headers }));
}

async function sliced(
  data: Buffer,
  aborted: typeof ABORTED,
  offset: number,
  room = NO_LIMIT,
  crc: CrcCheck = "scan",
) {
  const all = await scanRecordSet(data, crc);
  return sliceBatches(all, abortedBatches(all, aborted), offset, room);
}

async function decodedUnits(units: readonly SourceBatch[]): Promise<MirrorRecord[][]> {
  return Promise.all(units.map(async (u) => (await decodeRecordBatches(u.bytes)).flatMap((b) => b.records)));
}

describe("sliceBatches", () => {
  for (const [isolation, aborted] of [
    ["read_committed", ABORTED],
    ["read_uncommitted", []],
  ] as const) {
    it(`gives fetch's records, nextOffset and epochs from every offset (${isolation})`, async () => {
      const data = await recordSet();
      const decoded = await decodeRecordBatches(data);
      for (let offset = 0; offset <= 20; offset++) {
        const at = `${isolation} from ${offset}`;
        // Prepare: what fetch makes of the same response.
        const fetched = slicePartition(
          decoded,
          dropAborted(decoded, [...aborted]),
          offset,
          Number.MAX_SAFE_INTEGER,
        );

        // Act
        const slice = await sliced(data, [...aborted], offset);

        // Assess: the same offsets, epochs and records, each unit a run of fetch's records.
        assert.equal(slice.nextOffset, fetched.nextOffset, `${at}: nextOffset`);
        assert.deepEqual(slice.epochs, fetched.epochs, `${at}: epochs`);
        assert.equal(slice.records, fetched.records.length, `${at}: records`);
        assert.equal(
          slice.bytes,
          slice.units.reduce((n, u) => n + u.bytes.length, 0),
          `${at}: bytes`,
        );
        let pos = 0;
        const copies = await decodedUnits(slice.units);
        for (const [i, unit] of slice.units.entries()) {
          const run = fetched.records.slice(pos, pos + unit.count);
          pos += unit.count;
          assert.equal(unit.baseOffset, run[0]?.offset, `${at}: unit ${i} baseOffset`);
          assert.equal(unit.lastOffset, run.at(-1)?.offset, `${at}: unit ${i} lastOffset`);
          assert.deepEqual(content(copies[i] ?? []), content(run), `${at}: unit ${i} records`);
        }
        assert.equal(pos, fetched.records.length, `${at}: every record in a unit`);
      }
    });
  }

  it("drops control batches and the aborted transaction, and passes the rest as they came but the gapped one", async () => {
    const data = await recordSet();

    const slice = await sliced(data, ABORTED, 0);

    assert.deepEqual(
      slice.units.map((u) => [u.baseOffset, u.lastOffset, u.count, u.producerId]),
      [
        [0, 4, 5, 42n],
        [8, 9, 2, 8n],
        [11, 15, 3, -1n],
        [16, 18, 3, 42n],
      ],
    );
    const scanned = await scanRecordSet(data);
    const asStored = (base: number) => scanned.find((s) => s.baseOffset === base)?.bytes;
    assert.deepEqual(slice.units[0]?.bytes, asStored(0));
    assert.deepEqual(slice.units[1]?.bytes, asStored(8));
    assert.notDeepEqual(slice.units[2]?.bytes, asStored(11), "the gapped batch is encoded again");
    assert.deepEqual(slice.units[3]?.bytes, asStored(16));
    assert.equal(slice.nextOffset, 19);
  });

  it("never splits a batch: stops before one that would pass maxRecords, and resumes at it", async () => {
    const data = await recordSet();

    const slice = await sliced(data, [], 0, { ...NO_LIMIT, maxRecords: 6 });

    assert.deepEqual(
      slice.units.map((u) => u.baseOffset),
      [0],
    );
    assert.equal(slice.nextOffset, 5);
    assert.deepEqual(slice.epochs, epochsOf(await scanRecordSet(data), 0, 5));
  });

  it("stops before a batch that would pass maxBytes", async () => {
    const data = await recordSet();
    const [first] = await scanRecordSet(data);
    assert.ok(first);

    const slice = await sliced(data, [], 0, { ...NO_LIMIT, maxBytes: first.bytes.length + 1 });

    assert.equal(slice.units.length, 1);
    assert.equal(slice.bytes, first.bytes.length);
    assert.equal(slice.nextOffset, 5);
  });

  it("takes the fetch's first batch whatever the limits, and none past them once the fetch has one", async () => {
    const data = await recordSet();

    const first = await sliced(data, [], 0, { maxRecords: 1, maxBytes: 1, first: true });
    const later = await sliced(data, [], 0, { maxRecords: 1, maxBytes: 1, first: false });

    assert.deepEqual(
      first.units.map((u) => [u.baseOffset, u.count]),
      [[0, 5]],
    );
    assert.equal(first.nextOffset, 5);
    assert.deepEqual(later.units, []);
    assert.equal(later.nextOffset, 0, "no progress: the batch stays for the next fetch");
  });

  it("steps over an aborted transaction and its marker when the limits stop at the next batch", async () => {
    const data = await recordSet();

    const slice = await sliced(data, ABORTED, 5, { maxRecords: 1, maxBytes: 1, first: false });

    assert.deepEqual(slice.units, []);
    assert.equal(slice.nextOffset, 8);
  });

  it("with the CRC left to the target, checks every batch it does not pass as it came", async () => {
    const batches = await recordSetBatches();
    /** recordSet with a value byte of batch `i` changed after the broker stored it. */
    const corruptedAt = (i: number) =>
      Buffer.concat(
        batches.map((b, j) => {
          if (j !== i) return b;
          const bad = Buffer.from(b);
          bad[bad.length - 2] = (bad[bad.length - 2] as number) ^ 0x01;
          return bad;
        }),
      );
    const outcome = async (i: number, offset: number, aborted: typeof ABORTED) => {
      try {
        const slice = await sliced(corruptedAt(i), aborted, offset, NO_LIMIT, "write");
        const base = Number(batches[i]?.readBigInt64BE(0));
        const unit = slice.units.find((u) => u.baseOffset === base);
        return unit?.contentCrc === null ? "passed unchecked" : "not passed";
      } catch (error) {
        if (isReplicatorError(error, "CORRUPT_BATCH") && /CRC/.test(error.message)) return "refused";
        throw error;
      }
    };
    const cases: [number, number, typeof ABORTED, string, string][] = [
      [0, 0, ABORTED, "passed unchecked", "a whole batch from its first offset"],
      [0, 2, ABORTED, "refused", "begins before the offset: decoded"],
      [0, 5, ABORTED, "refused", "dropped as before the offset"],
      [1, 0, ABORTED, "refused", "dropped as aborted"],
      [1, 0, [], "passed unchecked", "read_uncommitted passes it"],
      [2, 0, ABORTED, "refused", "a control batch: decoded"],
      [5, 0, ABORTED, "refused", "compaction gaps: decoded"],
    ];
    for (const [i, offset, aborted, expected, why] of cases) {
      assert.equal(await outcome(i, offset, aborted), expected, `batch ${i} from ${offset}: ${why}`);
    }
  });
});
