/**
 * Property: the native CRC-32C (@node-rs/crc32 behind lib/kafka/codec/crc32c.ts) and the
 * JavaScript one give the same checksum for any bytes and any [start, end) of any view, however
 * the view lies in its ArrayBuffer; and on short inputs both equal a bit-at-a-time reference too
 * simple to share a bug with either.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { loadNativeCrc32c } from "../../../../lib/kafka/codec/crc32c.js";
import { jsCrc32c } from "../../../../lib/kafka/codec/crc32c-js.js";

function bitwiseCrc32c(buf: Uint8Array): number {
  let c = 0xffffffff;
  for (const byte of buf) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
  }
  return ~c >>> 0;
}

const loaded = loadNativeCrc32c();
if (loaded instanceof Error) throw new Error(`@node-rs/crc32 did not load: ${loaded.message}`);
const nativeCrc32c = loaded;

/** A view into a larger buffer (`shift` bytes in) and a range of it. */
const rangeArb = (maxLength: number) =>
  fc
    .record({
      bytes: fc.uint8Array({ maxLength }),
      shift: fc.integer({ min: 0, max: 15 }),
      cuts: fc.tuple(fc.nat(), fc.nat()),
    })
    .map(({ bytes, shift, cuts }) => {
      const backing = new Uint8Array(bytes.length + shift);
      backing.set(bytes, shift);
      const view = backing.subarray(shift);
      const [a, b] = cuts.map((c) => (view.length === 0 ? 0 : c % (view.length + 1)));
      return { view, start: Math.min(a ?? 0, b ?? 0), end: Math.max(a ?? 0, b ?? 0) };
    });

describe("crc32c implementations (property)", () => {
  it("agree on any range of any view, up to 64 KiB", () => {
    fc.assert(
      fc.property(rangeArb(65_536), ({ view, start, end }) => {
        assert.equal(nativeCrc32c(view, start, end), jsCrc32c(view, start, end));
      }),
      { numRuns: 300 },
    );
  });

  it("both equal a bitwise reference on short ranges", () => {
    fc.assert(
      fc.property(rangeArb(300), ({ view, start, end }) => {
        const expected = bitwiseCrc32c(view.subarray(start, end));
        assert.equal(nativeCrc32c(view, start, end), expected);
        assert.equal(jsCrc32c(view, start, end), expected);
      }),
      { numRuns: 500 },
    );
  });

  it("agree with a whole view by default", () => {
    fc.assert(
      fc.property(rangeArb(4096), ({ view }) => {
        assert.equal(nativeCrc32c(view), jsCrc32c(view));
      }),
    );
  });
});
