import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { describe, it } from "node:test";
import { lz4BlockBound, lz4CompressBlock } from "../../../../lib/kafka/codec/lz4-block.js";
import { fixturePayload } from "./fixtures/payload.js";

interface Lz4Js {
  compressBlock(
    src: Uint8Array,
    dst: Uint8Array,
    sIndex: number,
    sLength: number,
    table: Uint32Array,
  ): number;
  decompressBlock(src: Uint8Array, dst: Uint8Array, sIndex: number, sLength: number, dIndex: number): number;
}
const lz4js = createRequire(import.meta.url)("lz4js") as Lz4Js;

/**
 * Walks a block's sequences as the LZ4 block format defines them and lists every rule a strict
 * decoder (the reference LZ4_decompress_safe, lz4-java in Kafka's broker) enforces that it breaks.
 */
function formatViolations(block: Buffer, decodedLength: number): string[] {
  const problems: string[] = [];
  let at = 0;
  let position = 0; // in the decoded block
  const length = (start: number): [number, number] => {
    let n = 0;
    let i = start;
    for (;;) {
      const b = block[i++] ?? 0;
      n += b;
      if (b !== 255) return [n, i];
    }
  };
  while (at < block.length) {
    const token = block[at++] ?? 0;
    let literals = token >> 4;
    if (literals === 15) [literals, at] = ((l) => [15 + l[0], l[1]])(length(at));
    at += literals;
    position += literals;
    if (at === block.length) {
      if (decodedLength >= 5 && literals < 5) problems.push(`the last sequence has ${literals} literals`);
      break;
    }
    const offset = (block[at] ?? 0) | ((block[at + 1] ?? 0) << 8);
    at += 2;
    let match = (token & 15) + 4;
    if ((token & 15) === 15) [match, at] = ((l) => [19 + l[0], l[1]])(length(at));
    if (offset === 0 || offset > position)
      problems.push(`offset ${offset} at ${position} reaches before the block`);
    if (position > decodedLength - 12) problems.push(`a match starts at ${position} of ${decodedLength}`);
    if (position + match > decodedLength - 5)
      problems.push(`a match ends at ${position + match} of ${decodedLength}`);
    position += match;
  }
  if (position !== decodedLength) problems.push(`decodes to ${position} bytes, not ${decodedLength}`);
  return problems;
}

/** 29 distinct bytes, then their first 11 again: the repeat begins 11 bytes before the end. */
function lateRepeat(): Buffer {
  const head = Buffer.from(Array.from({ length: 29 }, (_, i) => (i * 37 + 11) & 0xff));
  return Buffer.concat([head, head.subarray(0, 11)]);
}

function inputs(): Buffer[] {
  const repeated = Buffer.alloc(70_000, 0xab);
  const cycle = Buffer.from(Array.from({ length: 65_536 }, (_, i) => (i * 7) % 13));
  return [
    Buffer.from([1, 2, 3]),
    Buffer.alloc(12, 7),
    Buffer.alloc(13, 7),
    Buffer.alloc(40, 0),
    lateRepeat(),
    repeated.subarray(0, 65_536),
    cycle,
    fixturePayload(65_536),
    randomBytes(65_536),
  ];
}

describe("lz4CompressBlock", () => {
  it("keeps the block format's end rules and decodes to its input (lz4js's decoder)", () => {
    for (const input of inputs()) {
      const dst = Buffer.alloc(lz4BlockBound(input.length));
      const packed = lz4CompressBlock(input, 0, input.length, dst, new Int32Array(1 << 16));
      const block = dst.subarray(0, packed);
      assert.deepEqual(formatViolations(block, input.length), [], `${input.length} bytes`);
      const decoded = Buffer.alloc(input.length);
      assert.equal(lz4js.decompressBlock(block, decoded, 0, packed, 0), input.length);
      assert.deepEqual(decoded, input);
    }
  });

  it("compresses only its range, referring nowhere before it", () => {
    const input = Buffer.concat([Buffer.alloc(1_000, 0x5a), Buffer.alloc(1_000, 0x5a)]);
    const dst = Buffer.alloc(lz4BlockBound(1_000));
    const packed = lz4CompressBlock(input, 1_000, 2_000, dst, new Int32Array(1 << 16));

    assert.ok(packed < 100, `1,000 equal bytes took ${packed}`);
    assert.deepEqual(formatViolations(dst.subarray(0, packed), 1_000), []);
  });

  // Why we do not use lz4js's block writer: the checker above finds what Kafka's broker refused.
  it("regression: lz4js 0.2.0's block writer starts matches within 12 bytes of the end", () => {
    const input = lateRepeat();
    const dst = new Uint8Array(lz4BlockBound(input.length));
    const packed = lz4js.compressBlock(input, dst, 0, input.length, new Uint32Array(1 << 16));

    const problems = formatViolations(Buffer.from(dst.subarray(0, packed)), input.length);
    assert.deepEqual(problems, ["a match starts at 29 of 40"]);
  });
});
