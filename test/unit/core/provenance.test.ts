import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { MirrorRecord } from "../../../lib/core/model.js";
import {
  decodeProvenance,
  encodeProvenance,
  isLoopback,
  lastProvenance,
  type ProvenanceSettings,
  withProvenance,
} from "../../../lib/core/provenance.js";

const HEADER = Buffer.from("kafka-mirror.provenance");
const aToB: ProvenanceSettings = { header: HEADER, sourceAlias: "A", targetAlias: "B" };
const bToA: ProvenanceSettings = { header: HEADER, sourceAlias: "B", targetAlias: "A" };

function record(offset: number, headers: MirrorRecord["headers"] = []): MirrorRecord {
  return { offset, timestamp: 1, key: null, value: Buffer.from([0xff, offset & 0xff]), headers };
}

describe("provenance header", () => {
  it("round-trips alias, partition and an offset beyond 32 bits", () => {
    const p = { alias: "idc1.prod", partition: 17, offset: 2 ** 40 + 5 };

    const encoded = encodeProvenance(p);

    assert.equal(encoded.length, 1 + 1 + 9 + 4 + 8);
    assert.deepEqual(decodeProvenance(encoded), p);
  });

  it("reads foreign or damaged bytes as no provenance instead of throwing", () => {
    const good = encodeProvenance({ alias: "A", partition: 1, offset: 2 });
    assert.equal(decodeProvenance(null), null);
    assert.equal(decodeProvenance(Buffer.from("hello")), null);
    assert.equal(decodeProvenance(good.subarray(0, good.length - 1)), null);
    assert.equal(decodeProvenance(Buffer.concat([Buffer.from([2]), good.subarray(1)])), null);
  });

  it("appends ours after the record's own headers, keeping them in order", () => {
    const original = record(42, [
      { key: Buffer.from("h"), value: null },
      { key: Buffer.from("h"), value: Buffer.from([0xc3, 0x28]) },
    ]);

    const copied = withProvenance(original, aToB, 3);

    assert.deepEqual(copied.headers.slice(0, 2), original.headers);
    assert.deepEqual(lastProvenance(copied, HEADER), { alias: "A", partition: 3, offset: 42 });
    assert.deepEqual(copied.value, original.value);
  });

  it("a record copied from A to B is not copied back from B to A", () => {
    const native = record(7);
    const inB = withProvenance(native, aToB, 0);

    assert.equal(isLoopback(native, aToB), false);
    assert.equal(isLoopback(inB, bToA), true);
  });

  it("a record that went round a ring of three is not copied again", () => {
    const bToC: ProvenanceSettings = { header: HEADER, sourceAlias: "B", targetAlias: "C" };
    const cToA: ProvenanceSettings = { header: HEADER, sourceAlias: "C", targetAlias: "A" };
    const inB = withProvenance(record(1), aToB, 0);
    const inC = withProvenance(inB, bToC, 0);

    assert.equal(isLoopback(inB, bToC), false);
    assert.equal(isLoopback(inC, cToA), true);
  });

  it("a header of another name is not provenance", () => {
    const other = { ...aToB, header: Buffer.from("other") };
    const inB = withProvenance(record(1), other, 0);

    assert.equal(isLoopback(inB, bToA), false);
    assert.equal(lastProvenance(inB, HEADER), null);
  });
});
