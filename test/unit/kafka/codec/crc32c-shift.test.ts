// The CRC arithmetic pass-through rewrites batch headers with (lib/kafka/codec/crc32c-shift.ts):
// a CRC after a change of the first bytes, from the old CRC alone, must equal the CRC computed
// again over every byte.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import fc from "fast-check";
import { crc32c } from "../../../../lib/kafka/codec/crc32c.js";
import { crc32cAfterChange, crc32cZeroExtend } from "../../../../lib/kafka/codec/crc32c-shift.js";

/** The raw CRC register (no initial value, no final XOR) of `bytes`: what crc32cZeroExtend extends. */
function rawCrc(bytes: Uint8Array): number {
  return (crc32c(bytes) ^ crc32c(new Uint8Array(bytes.length))) >>> 0;
}

describe("crc32cZeroExtend", () => {
  it("extends a raw CRC as zero bytes appended would, for lengths around every power of two", () => {
    // Prepare
    const head = randomBytes(36);
    for (const zeros of [0, 1, 2, 3, 7, 8, 9, 63, 64, 65, 1000, 4096, 65_535, 65_536, 1 << 20]) {
      const whole = Buffer.concat([head, Buffer.alloc(zeros)]);

      // Act / Assess
      assert.equal(crc32cZeroExtend(rawCrc(head), zeros), rawCrc(whole), `${zeros} zero bytes`);
    }
  });

  it("refuses a negative or fractional length", () => {
    assert.throws(() => crc32cZeroExtend(1, -1), RangeError);
    assert.throws(() => crc32cZeroExtend(1, 1.5), RangeError);
  });
});

describe("crc32cAfterChange", () => {
  it("equals a full recompute for random regions and changes of their first bytes", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 3000 }),
        fc.uint8Array({ minLength: 1, maxLength: 64 }),
        (region, change) => {
          // Prepare: `change` overwrites the region's first bytes (as many as fit).
          const length = Math.min(region.length, change.length);
          const changed = Uint8Array.from(region);
          changed.set(change.subarray(0, length));

          // Act
          const crc = crc32cAfterChange(
            crc32c(region),
            region.subarray(0, length),
            changed.subarray(0, length),
            region.length,
          );

          // Assess
          assert.equal(crc, crc32c(changed));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("refuses a change longer than its region or of another length than what it replaces", () => {
    assert.throws(() => crc32cAfterChange(0, new Uint8Array(4), new Uint8Array(4), 3), RangeError);
    assert.throws(() => crc32cAfterChange(0, new Uint8Array(4), new Uint8Array(3), 10), RangeError);
  });
});
