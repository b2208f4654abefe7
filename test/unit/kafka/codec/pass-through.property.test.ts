/**
 * Property: pass-through's header rewrites (lib/kafka/codec/pass-through.ts) keep every byte but
 * the fields they rewrite, and their CRCs, computed from the stored CRC without reading the
 * payload, equal a CRC-32C computed again over the whole batch: for random records in every
 * codec, random producer fields on the source batch and on the copy, random offsets and leader
 * epochs. contentCrc is the same for a batch and its produced copy.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import type { CompressionCodec } from "../../../../lib/config/compression.js";
import type { MirrorRecord } from "../../../../lib/core/model.js";
import { crc32c } from "../../../../lib/kafka/codec/crc32c.js";
import {
  contentCrc,
  type ProducerFields,
  rewriteForProduce,
} from "../../../../lib/kafka/codec/pass-through.js";
import { encodeRecordBatch } from "../../../../lib/kafka/codec/record-batch.js";

const CODECS: CompressionCodec[] = ["none", "gzip", "snappy", "lz4", "zstd"];
const ATTRIBUTES = 21;
const TRANSACTIONAL = 0x10;

const bytesArb = fc.option(
  fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b)),
  { freq: 5 },
);
const recordsArb: fc.Arbitrary<MirrorRecord[]> = fc
  .array(
    fc.record({
      timestamp: fc.integer({ min: 1_600_000_000_000, max: 1_800_000_000_000 }),
      key: bytesArb,
      value: bytesArb,
      headers: fc.array(
        fc.record({ key: fc.uint8Array({ maxLength: 8 }).map((b) => Buffer.from(b)), value: bytesArb }),
        { maxLength: 3 },
      ),
    }),
    { minLength: 1, maxLength: 30 },
  )
  .map((specs) => specs.map((spec, offset) => ({ offset, ...spec })));

const fieldsArb: fc.Arbitrary<ProducerFields> = fc.record({
  producerId: fc.bigInt({ min: -1n, max: 2n ** 63n - 1n }),
  producerEpoch: fc.integer({ min: -1, max: 32_767 }),
  baseSequence: fc.integer({ min: -1, max: 2 ** 31 - 1 }),
  transactional: fc.boolean(),
});

/** A batch as a broker stores it: our encoding with `fields`, at `baseOffset` in `leaderEpoch`. */
async function storedBatch(
  records: readonly MirrorRecord[],
  codec: CompressionCodec,
  fields: ProducerFields,
  baseOffset: bigint,
  leaderEpoch: number,
): Promise<Buffer> {
  const batch = await encodeRecordBatch(records, {
    compression: codec,
    producerId: fields.producerId,
    producerEpoch: fields.producerEpoch,
    baseSequence: fields.baseSequence,
    isTransactional: fields.transactional,
  });
  // Outside the CRC's region: the broker sets both when it appends.
  batch.writeBigInt64BE(baseOffset, 0);
  batch.writeInt32BE(leaderEpoch, 12);
  return batch;
}

/** `batch` with `fields` written in place and its CRC computed again over every byte. */
function recomputed(batch: Buffer, fields: ProducerFields): Buffer {
  const copy = Buffer.from(batch);
  const attributes = copy.readInt16BE(ATTRIBUTES);
  copy.writeInt16BE(
    fields.transactional ? attributes | TRANSACTIONAL : attributes & ~TRANSACTIONAL,
    ATTRIBUTES,
  );
  copy.writeBigInt64BE(fields.producerId, 43);
  copy.writeInt16BE(fields.producerEpoch, 51);
  copy.writeInt32BE(fields.baseSequence, 53);
  copy.writeUInt32BE(crc32c(copy, 21, copy.length), 17);
  return copy;
}

const NO_PRODUCER: ProducerFields = {
  producerId: -1n,
  producerEpoch: -1,
  baseSequence: -1,
  transactional: false,
};

const caseArb = fc.record({
  records: recordsArb,
  codec: fc.constantFrom(...CODECS),
  source: fieldsArb,
  target: fieldsArb,
  baseOffset: fc.bigInt({ min: 0n, max: 2n ** 53n }),
  leaderEpoch: fc.integer({ min: -1, max: 2 ** 31 - 1 }),
  headroom: fc.integer({ min: 0, max: 64 }),
});

describe("pass-through header rewrites (property)", () => {
  it("rewriteForProduce changes only baseOffset, leader epoch, producer fields, the transactional bit and the CRC, and its CRC is the full recompute", async () => {
    await fc.assert(
      fc.asyncProperty(
        caseArb,
        async ({ records, codec, source, target, baseOffset, leaderEpoch, headroom }) => {
          // Prepare
          const stored = await storedBatch(records, codec, source, baseOffset, leaderEpoch);

          // Act
          const [head, recordsPart] = rewriteForProduce(stored, target, headroom);
          const out = Buffer.concat([head, recordsPart]);

          // Assess: the expected copy is the stored batch with the fields set and a CRC over all bytes.
          const expected = recomputed(stored, target);
          expected.writeBigInt64BE(0n, 0);
          expected.writeInt32BE(-1, 12);
          assert.equal(head.length, headroom + 61, "the new buffer: headroom and the batch header");
          assert.equal(recordsPart.buffer, stored.buffer, "the records are not copied");
          assert.equal(out.length, headroom + stored.length);
          assert.deepEqual(out.subarray(headroom), expected);
          assert.deepEqual(out.subarray(headroom + 61), stored.subarray(61), "records: the source's bytes");
          assert.equal(
            stored.readUInt32BE(17),
            crc32c(stored, 21, stored.length),
            "the source is left alone",
          );
        },
      ),
      { numRuns: 150 },
    );
  });

  it("contentCrc is the CRC without producer fields, equal for a stored batch and its produced copy stored elsewhere", async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async ({ records, codec, source, target, baseOffset, leaderEpoch }) => {
        // Prepare: the copy as the target's broker stores it (its own offset and leader epoch).
        const stored = await storedBatch(records, codec, source, baseOffset, leaderEpoch);
        const copy = Buffer.concat(rewriteForProduce(stored, target));
        copy.writeBigInt64BE(baseOffset + 17n, 0);
        copy.writeInt32BE(leaderEpoch ^ 5, 12);

        // Act
        const ofSource = contentCrc(stored);
        const ofCopy = contentCrc(copy);

        // Assess
        assert.equal(ofSource, recomputed(stored, NO_PRODUCER).readUInt32BE(17));
        assert.equal(ofCopy, ofSource);
      }),
      { numRuns: 150 },
    );
  });
});
