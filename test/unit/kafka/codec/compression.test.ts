import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, it } from "node:test";
import { deflateSync, gzipSync } from "node:zlib";
import type { CompressionCodec } from "../../../../lib/config/compression.js";
import { isReplicatorError } from "../../../../lib/errors.js";
import { compress, decompress } from "../../../../lib/kafka/codec/compression.js";
import { isXerialFramed, XERIAL_CHUNK_SIZE } from "../../../../lib/kafka/codec/snappy.js";
import { scanZstdFrames, zstdDecompressWasm } from "../../../../lib/kafka/codec/zstd.js";
import { fixturePayload } from "./fixtures/payload.js";

const CODECS: CompressionCodec[] = ["none", "gzip", "snappy", "lz4", "zstd"];

function fixture(name: string): Buffer {
  return readFileSync(new URL(`./fixtures/${name}`, import.meta.url));
}

function isCorrupt(error: unknown): boolean {
  return isReplicatorError(error, "CORRUPT_BATCH");
}

describe("compress/decompress", () => {
  for (const codec of CODECS) {
    it(`${codec}: round-trips empty, small, incompressible and multi-block data`, async () => {
      const inputs = [
        Buffer.alloc(0),
        Buffer.from([0, 1, 2, 0xff]),
        fixturePayload(100_000),
        fixturePayload(5_000_000),
      ];
      for (const input of inputs) {
        const packed = await compress(codec, input);
        assert.deepEqual(await decompress(codec, packed), input, `${input.length} bytes`);
      }
    });
  }

  for (const codec of ["gzip", "snappy", "lz4", "zstd"] as const) {
    it(`${codec}: garbage input is CORRUPT_BATCH`, async () => {
      await assert.rejects(
        decompress(codec, Buffer.from("not compressed at all, not even close")),
        isCorrupt,
      );
    });
  }

  it("gzip: reads what zlib's gzip and deflate-with-header write", async () => {
    const input = fixturePayload(10_000);
    assert.deepEqual(await decompress("gzip", gzipSync(input)), input);
    assert.deepEqual(await decompress("gzip", deflateSync(input)), input);
  });
});

describe("snappy framing", () => {
  it("writes the xerial framing with 32 KiB chunks, as the Java client does", async () => {
    const input = fixturePayload(XERIAL_CHUNK_SIZE * 2 + 10);
    const packed = await compress("snappy", input);
    assert.ok(isXerialFramed(packed));
    assert.equal(packed.subarray(0, 16).toString("hex"), "82534e41505059000000000100000001");
    let chunks = 0;
    for (let pos = 16; pos < packed.length; pos += 4 + packed.readInt32BE(pos)) chunks++;
    assert.equal(chunks, 3);
  });

  it("reads a raw snappy block (librdkafka) written by hand", async () => {
    // varint length 11, a 4-byte literal "abcd", then copy-1 of length 7 at offset 4.
    const raw = Buffer.from([0x0b, 0x0c, 0x61, 0x62, 0x63, 0x64, 0x0d, 0x04]);
    assert.deepEqual(await decompress("snappy", raw), Buffer.from("abcdabcdabc", "latin1"));
  });

  it("reads a hand-built xerial stream of two chunks", async () => {
    const chunkA = Buffer.from([0x03, 0x08, 0x01, 0x02, 0x03]);
    const chunkB = Buffer.from([0x02, 0x04, 0xfe, 0xff]);
    const header = Buffer.from("82534e41505059000000000100000001", "hex");
    const framed = Buffer.concat([header, lengthPrefixed(chunkA), lengthPrefixed(chunkB)]);
    assert.deepEqual(await decompress("snappy", framed), Buffer.from([1, 2, 3, 0xfe, 0xff]));
    await assert.rejects(decompress("snappy", framed.subarray(0, framed.length - 1)), isCorrupt);
  });
});

function lengthPrefixed(chunk: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeInt32BE(chunk.length);
  return Buffer.concat([length, chunk]);
}

describe("lz4 frames written by the reference lz4 tool", () => {
  it("reads independent blocks without content size", async () => {
    const frame = fixture("lz4-default.lz4");
    assert.equal((frame[4] as number) & 0x08, 0, "fixture has no content size");
    assert.deepEqual(await decompress("lz4", frame), fixturePayload(200_000));
  });

  it("reads linked 64 KiB blocks with block checksums and a content size", async () => {
    const frame = fixture("lz4-linked-sized.lz4");
    assert.equal((frame[4] as number) & 0x38, 0x18, "fixture: linked blocks, block checksum, content size");
    assert.deepEqual(await decompress("lz4", frame), fixturePayload(200_000));
  });
});

describe("lz4 frames we write", () => {
  // Regression: lz4js's frame writer leaves the block-independence flag clear, and Kafka's broker
  // refuses such a frame ("Dependent block stream is unsupported") with UNKNOWN_SERVER_ERROR.
  it("are Kafka's: version 01, independent blocks, 64 KiB block size, no checksums, a valid header checksum", async () => {
    const frame = await compress("lz4", fixturePayload(200_000));

    assert.equal(frame.readUInt32LE(0), 0x184d2204, "magic");
    assert.equal(frame[4], 0x60, "FLG: version 01 | block independence, no checksums, no content size");
    assert.equal(frame[5], 0x40, "BD: 64 KiB blocks");
    // 04 22 4d 18 60 40 82 begins every LZ4 batch Kafka's Java producer writes.
    assert.equal(frame[6], 0x82, "header checksum");
  });

  it("decode block by block, each on its own: no block refers back into the one before", async () => {
    const input = fixturePayload(300_000);
    const frame = await compress("lz4", input);
    const lz4js = createRequire(import.meta.url)("lz4js") as {
      decompressBlock(
        src: Uint8Array,
        dst: Uint8Array,
        sIndex: number,
        sLength: number,
        dIndex: number,
      ): number;
    };
    const parts: Buffer[] = [];
    for (let pos = 7; ; ) {
      const header = frame.readUInt32LE(pos);
      if (header === 0) break;
      const size = header & 0x7fffffff;
      assert.ok(size <= 0x10000, `block of ${size} bytes`);
      if (header & 0x80000000) {
        parts.push(frame.subarray(pos + 4, pos + 4 + size));
      } else {
        const alone = Buffer.alloc(0x10000);
        parts.push(alone.subarray(0, lz4js.decompressBlock(frame, alone, pos + 4, size, 0)));
      }
      pos += 4 + size;
    }
    assert.equal(parts.length, 5, "300,000 bytes in 64 KiB blocks");
    assert.deepEqual(Buffer.concat(parts), input);
  });
});

describe("zstd", () => {
  it("reads a streamed 3 MB frame without content size through the wasm decoder", async () => {
    const frame = fixture("zstd-streamed.zst");
    const [scanned] = scanZstdFrames(frame);
    assert.ok(scanned && scanned.end === frame.length && scanned.bound >= 3_000_000);
    assert.deepEqual(await zstdDecompressWasm(frame), fixturePayload(3_000_000));
    assert.deepEqual(await decompress("zstd", frame), fixturePayload(3_000_000));
  });

  it("reads concatenated frames and skips skippable frames", async () => {
    const a = await compress("zstd", fixturePayload(70_000));
    const skippable = Buffer.from("502a4d180300000001020" + "3", "hex");
    const b = fixture("zstd-streamed.zst");
    const joined = Buffer.concat([a, skippable, b]);
    assert.equal(scanZstdFrames(joined).length, 2);
    assert.deepEqual(
      await zstdDecompressWasm(joined),
      Buffer.concat([fixturePayload(70_000), fixturePayload(3_000_000)]),
    );
  });

  it("reads a hand-built frame of raw and RLE blocks with no content size", async () => {
    // magic, FHD 0 (window descriptor, no FCS), window 1 KiB, raw block "xyz", last RLE block 5 x 0x41.
    const frame = Buffer.from([
      0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x00, 0x18, 0x00, 0x00, 0x78, 0x79, 0x7a, 0x2b, 0x00, 0x00, 0x41,
    ]);
    assert.deepEqual(scanZstdFrames(frame), [{ start: 0, end: frame.length, bound: 8 }]);
    assert.deepEqual(await zstdDecompressWasm(frame), Buffer.from("xyzAAAAA", "latin1"));
  });

  it("rejects a truncated frame as CORRUPT_BATCH", async () => {
    const frame = fixture("zstd-streamed.zst");
    await assert.rejects(decompress("zstd", frame.subarray(0, frame.length - 100)), isCorrupt);
  });
});
