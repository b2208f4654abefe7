import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import { jsCrc32c } from "../../../../lib/kafka/codec/crc32c-js.js";

/** Bit-at-a-time CRC-32C: slow, but too simple to share a bug with the slicing-by-16 tables. */
function bitwiseCrc32c(buf: Uint8Array): number {
  let c = 0xffffffff;
  for (const byte of buf) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
  }
  return ~c >>> 0;
}

describe("jsCrc32c", () => {
  it("matches the published check value and the RFC 3720 (iSCSI) vectors", () => {
    assert.equal(jsCrc32c(Buffer.from("123456789", "latin1")), 0xe3069283);
    assert.equal(jsCrc32c(Buffer.alloc(32, 0x00)), 0x8a9136aa);
    assert.equal(jsCrc32c(Buffer.alloc(32, 0xff)), 0x62a8ab43);
    assert.equal(jsCrc32c(Buffer.from(Array.from({ length: 32 }, (_, i) => i))), 0x46dd794e);
    assert.equal(jsCrc32c(Buffer.from(Array.from({ length: 32 }, (_, i) => 31 - i))), 0x113fdb5c);
    assert.equal(jsCrc32c(Buffer.alloc(0)), 0);
  });

  it("agrees with a bitwise implementation for every length around the 8-byte stride", () => {
    const data = randomBytes(300);
    for (let length = 0; length <= 40; length++) {
      assert.equal(
        jsCrc32c(data.subarray(0, length)),
        bitwiseCrc32c(data.subarray(0, length)),
        `length ${length}`,
      );
    }
    assert.equal(jsCrc32c(data), bitwiseCrc32c(data));
  });

  it("agrees with a bitwise implementation at every alignment and length around the 16-byte stride", () => {
    // The word loop starts at the first 4-byte boundary of the underlying memory, so both the
    // view's offset in its ArrayBuffer and `start` move where the byte-wise prefix ends.
    const backing = randomBytes(400);
    for (let shift = 0; shift < 4; shift++) {
      const view = backing.subarray(shift);
      for (let start = 0; start < 5; start++) {
        for (let length = 60; length <= 100; length++) {
          assert.equal(
            jsCrc32c(view, start, start + length),
            bitwiseCrc32c(view.subarray(start, start + length)),
            `shift ${shift} start ${start} length ${length}`,
          );
        }
      }
    }
  });

  it("covers exactly [start, end) of a larger buffer", () => {
    const data = randomBytes(1000);
    assert.equal(jsCrc32c(data, 21, 977), bitwiseCrc32c(data.subarray(21, 977)));
    assert.equal(jsCrc32c(data, 5, 5), 0);
  });
});
