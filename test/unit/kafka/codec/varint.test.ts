import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isReplicatorError } from "../../../../lib/errors.js";
import {
  ByteReader,
  sizeOfVarint,
  sizeOfVarlong,
  writeVarint,
  writeVarlong,
} from "../../../../lib/kafka/codec/varint.js";

/** Reference zigzag varlong with BigInt, as in Kafka's ByteUtils.writeVarlong. */
function referenceVarlong(value: bigint): Buffer {
  let u = BigInt.asUintN(64, (value << 1n) ^ (value >> 63n));
  const bytes: number[] = [];
  while (u >= 0x80n) {
    bytes.push(Number(u & 0x7fn) | 0x80);
    u >>= 7n;
  }
  bytes.push(Number(u));
  return Buffer.from(bytes);
}

function encodeVarint(value: number): Buffer {
  const buf = Buffer.alloc(10);
  return buf.subarray(0, writeVarint(buf, 0, value));
}

function encodeVarlong(value: number): Buffer {
  const buf = Buffer.alloc(10);
  return buf.subarray(0, writeVarlong(buf, 0, value));
}

const LONG_SAMPLES: number[] = [
  0,
  1,
  -1,
  63,
  -64,
  64,
  -65,
  2 ** 31 - 1,
  -(2 ** 31),
  2 ** 31,
  -(2 ** 31) - 1,
  2 ** 35 + 7,
  -(2 ** 41) + 3,
  2 ** 48 - 1,
  2 ** 48,
  -(2 ** 48),
  -(2 ** 48) - 1,
  2 ** 52 - 1,
  2 ** 52,
  -(2 ** 52),
  -(2 ** 52) - 1,
  1_700_000_000_000,
  -1_700_000_000_000,
  Number.MAX_SAFE_INTEGER,
  Number.MIN_SAFE_INTEGER,
];

describe("varint", () => {
  it("writes the Kafka protocol's zigzag encoding", () => {
    assert.equal(encodeVarint(0).toString("hex"), "00");
    assert.equal(encodeVarint(-1).toString("hex"), "01");
    assert.equal(encodeVarint(1).toString("hex"), "02");
    assert.equal(encodeVarint(-64).toString("hex"), "7f");
    assert.equal(encodeVarint(64).toString("hex"), "8001");
    assert.equal(encodeVarint(2147483647).toString("hex"), "feffffff0f");
    assert.equal(encodeVarint(-2147483648).toString("hex"), "ffffffff0f");
  });

  it("round-trips int32 values and sizes them exactly", () => {
    for (const value of [
      0,
      1,
      -1,
      63,
      -64,
      64,
      8191,
      -8192,
      8192,
      1048575,
      -1048576,
      2 ** 27,
      2 ** 31 - 1,
      -(2 ** 31),
    ]) {
      const bytes = encodeVarint(value);
      assert.equal(sizeOfVarint(value), bytes.length, `size of ${value}`);
      const reader = new ByteReader(bytes, 0, bytes.length);
      assert.equal(reader.varint(), value);
      assert.equal(reader.pos, bytes.length);
    }
  });

  it("rejects a varint longer than 5 bytes and one that runs past its end", () => {
    const tooLong = Buffer.from("ffffffffff01", "hex");
    assert.throws(
      () => new ByteReader(tooLong, 0, tooLong.length).varint(),
      (e) => isReplicatorError(e, "CORRUPT_BATCH"),
    );
    const cut = Buffer.from("8080", "hex");
    assert.throws(
      () => new ByteReader(cut, 0, 2).varint(),
      (e) => isReplicatorError(e, "CORRUPT_BATCH"),
    );
    const bounded = Buffer.from("808001", "hex");
    assert.throws(
      () => new ByteReader(bounded, 0, 2).varint(),
      (e) => isReplicatorError(e, "CORRUPT_BATCH"),
    );
  });
});

describe("varlong", () => {
  it("matches a BigInt reference encoder and round-trips up to Number.MAX_SAFE_INTEGER", () => {
    for (const value of LONG_SAMPLES) {
      const bytes = encodeVarlong(value);
      assert.deepEqual(bytes, referenceVarlong(BigInt(value)), `encoding of ${value}`);
      assert.equal(sizeOfVarlong(value), bytes.length, `size of ${value}`);
      const reader = new ByteReader(bytes, 0, bytes.length);
      assert.equal(reader.varlong(), value, `decoding of ${value}`);
      assert.equal(reader.pos, bytes.length);
    }
  });

  it("reads reference encodings of 8- to 10-byte varlongs within the safe range", () => {
    for (const value of [2n ** 50n, -(2n ** 50n) - 5n, 2n ** 53n - 1n, -(2n ** 53n) + 1n]) {
      const bytes = referenceVarlong(value);
      assert.ok(bytes.length >= 8);
      assert.equal(new ByteReader(bytes, 0, bytes.length).varlong(), Number(value));
    }
  });

  it("throws CORRUPT_BATCH instead of rounding a varlong beyond Number.MAX_SAFE_INTEGER", () => {
    for (const value of [2n ** 53n, -(2n ** 53n), 2n ** 63n - 1n, -(2n ** 63n)]) {
      const bytes = referenceVarlong(value);
      assert.throws(
        () => new ByteReader(bytes, 0, bytes.length).varlong(),
        (e) => isReplicatorError(e, "CORRUPT_BATCH"),
        `value ${value}`,
      );
    }
  });

  it("reads length-prefixed bytes as views, with -1 as null", () => {
    const buf = Buffer.from([0x01, 0x06, 0xaa, 0xbb, 0xcc, 0x00]);
    const reader = new ByteReader(buf, 0, buf.length);
    assert.equal(reader.nullableBytes(), null);
    const bytes = reader.nullableBytes();
    assert.deepEqual(bytes, Buffer.from([0xaa, 0xbb, 0xcc]));
    assert.equal(bytes?.buffer, buf.buffer, "a view, not a copy");
    assert.deepEqual(reader.nullableBytes(), Buffer.alloc(0));
    assert.throws(
      () => new ByteReader(buf, 1, 4).nullableBytes(),
      (e) => isReplicatorError(e, "CORRUPT_BATCH"),
    );
  });
});
