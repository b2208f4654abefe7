// CrcCheck "write" (lib/kafka/codec/pass-through.ts): the worker's reader leaves the CRC of a batch
// that passes as it came to the target's broker. These pin the two halves of why that loses
// nothing: a corrupted batch's copy carries a CRC that does not match it either (so the broker
// refuses it), and every other use of the batch checks the CRC itself.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { CompressionCodec } from "../../../../lib/config/compression.js";
import { isReplicatorError } from "../../../../lib/errors.js";
import { crc32c } from "../../../../lib/kafka/codec/crc32c.js";
import {
  type CrcCheck,
  contentCrc,
  contentCrcOnDemand,
  rewriteForProduce,
  type ScannedBatch,
  scanRecordSet,
  sourceBatchOf,
} from "../../../../lib/kafka/codec/pass-through.js";
import { encodeRecordBatch } from "../../../../lib/kafka/codec/record-batch.js";

const T0 = 1_700_000_000_000;
const FIELDS = { producerId: 7n, producerEpoch: 2, baseSequence: 0, transactional: true };

/** A batch as a broker stores it: offsets 100..104, producer 42. */
async function stored(codec: CompressionCodec = "none"): Promise<Buffer> {
  const batch = await encodeRecordBatch(
    Array.from({ length: 5 }, (_, i) => ({
      offset: 100 + i,
      timestamp: T0 + i,
      key: Buffer.from([i]),
      value: Buffer.from(`value-${100 + i}`),
      headers: [],
    })),
    { compression: codec, producerId: 42n, producerEpoch: 3, baseSequence: 17, isTransactional: false },
  );
  batch.writeBigInt64BE(100n, 0);
  return batch;
}

/** `batch` with its last byte changed after the broker stored it: on the wire, say. */
function corrupted(batch: Buffer): Buffer {
  const copy = Buffer.from(batch);
  copy[copy.length - 2] = (copy[copy.length - 2] as number) ^ 0x01;
  return copy;
}

async function scanned(bytes: Buffer, crc: CrcCheck): Promise<ScannedBatch> {
  const [batch, ...rest] = await scanRecordSet(bytes, crc);
  assert.ok(batch);
  assert.equal(rest.length, 0);
  return batch;
}

/** Whether a v2 batch laid out for a produce request has a CRC matching its bytes. */
function crcHolds(parts: [Buffer, Buffer]): boolean {
  const batch = Buffer.concat(parts);
  return batch.readUInt32BE(17) === crc32c(batch, 21, batch.length);
}

const corruptBatch = (e: unknown) => isReplicatorError(e, "CORRUPT_BATCH") && /CRC/.test(e.message);

describe("pass-through with the CRC left to the target (CrcCheck write)", () => {
  it("scans a corrupted batch without reading its records; a scan that checks refuses it", async () => {
    const bad = corrupted(await stored());
    await assert.rejects(scanRecordSet(bad), corruptBatch);
    const batch = await scanned(bad, "write");
    assert.equal(batch.crcChecked, false);
    assert.equal((await scanned(await stored(), "scan")).crcChecked, true);
  });

  it("gives its copy a CRC that does not match either, so the target's broker refuses it", async () => {
    const good = await stored();
    const bad = corrupted(good);
    const unit = await sourceBatchOf(await scanned(bad, "write"), 100);
    assert.ok(unit);
    assert.ok(unit.bytes.equals(bad), "passes as it came");
    assert.equal(unit.contentCrc, null, "left to contentCrcOnDemand, which checks it");
    assert.equal(crcHolds(rewriteForProduce(unit.bytes, FIELDS)), false, "the corrupted batch's copy");
    assert.equal(crcHolds(rewriteForProduce(good, FIELDS)), true, "a sound batch's copy");
  });

  it("carries a change of any bit of the CRC'd region into the copy, the rewritten fields' too", async () => {
    const good = await stored();
    for (const transactional of [true, false]) {
      for (let bit = 21 * 8; bit < good.length * 8; bit++) {
        const bad = Buffer.from(good);
        bad[bit >> 3] = (bad[bit >> 3] as number) ^ (0x80 >> (bit & 7));
        const copy = rewriteForProduce(bad, { ...FIELDS, transactional });
        assert.equal(
          crcHolds(copy),
          false,
          `bit ${bit & 7} of byte ${bit >> 3}, transactional ${transactional}`,
        );
      }
    }
  });

  it("checks the CRC before a contentCrc is computed on demand", async () => {
    const good = await stored();
    await assert.rejects(contentCrcOnDemand(corrupted(good), undefined), corruptBatch);
    await assert.rejects(contentCrcOnDemand(corrupted(await stored("gzip")), "gzip"), corruptBatch);
    assert.equal(await contentCrcOnDemand(good, undefined), contentCrc(good));
  });

  it("checks the CRC of a batch it decodes or recompresses", async () => {
    const bad = corrupted(await stored("gzip"));
    const batch = await scanned(bad, "write");
    await assert.rejects(sourceBatchOf(batch, 102), corruptBatch, "begins before the offset: decoded");
    await assert.rejects(sourceBatchOf(batch, 100, "zstd"), corruptBatch, "recompressed");
    const asItCame = await sourceBatchOf(batch, 100, "gzip");
    assert.ok(asItCame?.bytes.equals(bad), "already in the target's codec: passes as it came");
    assert.equal(asItCame?.contentCrc, null);
  });
});
