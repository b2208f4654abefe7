import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isReplicatorError } from "../../../../lib/errors.js";
import {
  AnswerPool,
  answerPoolMode,
  LARGER_CLASS_FACTOR,
  MAX_FREE_BYTES,
  MIN_POOLED_BYTES,
  POISON_BYTE,
  type PooledUnit,
  sizeClassOf,
} from "../../../../lib/kafka/wire/answer-pool.js";

const MIB = 1024 * 1024;

/** An answer of `size` bytes from `pool`, its records from byte 100 on, and a unit per `cuts` range. */
function answer(pool: AnswerPool, size = MIB, cuts: [number, number][] = [[100, 1_000]]) {
  const frame = pool.take(size);
  const records = frame.subarray(100);
  const units: PooledUnit[] = cuts.map(([from, to]) => ({ bytes: frame.subarray(from, to) }));
  return { frame, records, units };
}

/** Whether the next answer of the same size reuses `frame`'s memory. */
function reusedBy(pool: AnswerPool, frame: Buffer): boolean {
  return pool.take(frame.length).buffer === frame.buffer;
}

describe("AnswerPool", () => {
  it("gives an answer's buffer back once its batches are written, and the next answer of its size reuses it", () => {
    const pool = new AnswerPool("on");
    const { frame, records, units } = answer(pool, MIB, [
      [100, 500],
      [500, 900],
    ]);
    pool.hold(records);
    pool.adopt(records, units);

    pool.done(units.slice(0, 1));
    assert.equal(pool.returned, 0, "a batch not written yet still reads it");
    pool.done(units.slice(1));

    assert.equal(pool.returned, 1);
    assert.ok(reusedBy(pool, frame));
    assert.equal(pool.reused, 1);
  });

  it("keeps an answer while another partition's caller holds it (regression guard: adopt before the others ran)", () => {
    const pool = new AnswerPool("on");
    const { frame, records, units } = answer(pool);
    const otherRecords = frame.subarray(2_000);
    pool.hold(records);
    pool.hold(otherRecords);

    pool.adopt(records, units);
    pool.done(units);
    assert.equal(pool.returned, 0);

    pool.adopt(otherRecords, []);
    assert.equal(pool.returned, 1);
  });

  it("never gives back an answer a partition's caller did not adopt from (a records-mode read, a failed fetch)", () => {
    const pool = new AnswerPool("on");
    const { frame, records, units } = answer(pool);
    pool.hold(records);
    pool.hold(frame.subarray(5_000));
    pool.adopt(records, units);
    pool.done(units);

    assert.equal(pool.returned, 0);
    assert.equal(reusedBy(pool, frame), false);
  });

  it("counts a batch once: a second done, or one of a batch it never adopted, gives nothing back", () => {
    const pool = new AnswerPool("on");
    const first = answer(pool);
    pool.hold(first.records);
    pool.adopt(first.records, first.units);
    pool.done(first.units);
    assert.equal(pool.returned, 1);

    // The next answer reuses the memory; its unit is still out.
    const second = answer(pool);
    assert.equal(second.frame.buffer, first.frame.buffer);
    pool.hold(second.records);
    pool.adopt(second.records, second.units);
    pool.done(first.units); // the old batch again
    pool.done([{ bytes: second.frame.subarray(100, 1_000) }]); // the same bytes, another object
    assert.equal(pool.returned, 1, "the second answer came back while its batch was out");
  });

  it("keeps an answer out while a socket still holds its bytes, past the batches' done", () => {
    const pool = new AnswerPool("on");
    const { frame, records, units } = answer(pool);
    pool.hold(records);
    pool.adopt(records, units);
    const unpin = pool.pin((units[0] as PooledUnit).bytes.subarray(61));
    assert.ok(unpin !== undefined);

    pool.done(units);
    assert.equal(pool.returned, 0, "a request queued on a stalled socket would send reused bytes");
    unpin();
    assert.equal(pool.returned, 1);
    assert.ok(reusedBy(pool, frame));
  });

  it("pins nothing of a buffer that is not out, and an unpin then touches no later use of it", () => {
    const pool = new AnswerPool("on");
    assert.equal(pool.pin(Buffer.alloc(10)), undefined);
    const { frame, records, units } = answer(pool);
    pool.hold(records);
    pool.adopt(records, units);
    const unpin = pool.pin(records);
    pool.done(units);
    unpin?.();
    // Reused: the same memory is out again, held by the next answer's partition.
    const next = pool.take(frame.length);
    assert.equal(next.buffer, frame.buffer);
    pool.hold(next.subarray(100));
    unpin?.();
    assert.equal(pool.returned, 1, "a second unpin gave back an answer still held");
  });

  it("does not count bytes outside the answer (a batch encoded again)", () => {
    const pool = new AnswerPool("on");
    const { records } = answer(pool);
    const reencoded: PooledUnit = { bytes: Buffer.alloc(200) };
    pool.hold(records);
    pool.adopt(records, [reencoded]);
    assert.equal(pool.returned, 1, "its hold alone kept it");
    pool.done([reencoded]);
    assert.equal(pool.returned, 1);
  });

  it("pools only answers between its bounds, and none when off", () => {
    const small = new AnswerPool("on").take(MIN_POOLED_BYTES - 1);
    const pool = new AnswerPool("on");
    pool.hold(small);
    pool.adopt(small, [{ bytes: small }]);
    assert.equal(pool.returned, 0);

    const off = new AnswerPool("off");
    const { records, units } = answer(off);
    off.hold(records);
    off.adopt(records, units);
    off.done(units);
    assert.equal(off.returned, 0);
  });

  it("in poison mode pools answers of every size and overwrites each as it comes back", () => {
    const pool = new AnswerPool("poison");
    const { frame, records, units } = answer(pool, 2_000, [[100, 500]]);
    frame.fill(1);
    pool.hold(records);
    pool.adopt(records, units);
    assert.equal(units[0]?.bytes[0], 1);
    pool.done(units);

    assert.equal(units[0]?.bytes[0], POISON_BYTE);
    assert.ok(frame.every((b) => b === POISON_BYTE));
  });

  /** Answers of these sizes, all out at once, then all written: their buffers are free. */
  function freed(pool: AnswerPool, sizes: number[]): Buffer[] {
    const answers = sizes.map((size) => answer(pool, size));
    for (const a of answers) {
      pool.hold(a.records);
      pool.adopt(a.records, a.units);
      pool.done(a.units);
    }
    return answers.map((a) => a.frame);
  }

  it("gives an answer a larger free buffer, the smallest within LARGER_CLASS_FACTOR, when its own class has none", () => {
    const pool = new AnswerPool("on");
    // Freed smallest first: the first fitting class is not the one to take.
    const [between, larger, tooLarge] = freed(pool, [
      1.5 * MIB,
      LARGER_CLASS_FACTOR * MIB,
      LARGER_CLASS_FACTOR * MIB + MIB / 2,
    ]) as [Buffer, Buffer, Buffer];

    const first = pool.take(MIB);
    assert.equal(first.length, MIB);
    assert.equal(first.buffer, between.buffer, "the smallest larger class first");
    assert.equal(pool.take(MIB).buffer, larger.buffer);
    const third = pool.take(MIB);
    assert.notEqual(third.buffer, tooLarge.buffer, "not beyond the factor");
    assert.equal(pool.take(tooLarge.length).buffer, tooLarge.buffer);
    assert.equal(pool.reused, 3);
    assert.equal(pool.allocated, 4, "three answers, then the third take");
  });

  it("prefers a free buffer of the answer's own class to a larger one", () => {
    const pool = new AnswerPool("on");
    const [twice, own] = freed(pool, [2 * MIB, MIB]) as [Buffer, Buffer];
    assert.equal(pool.take(MIB).buffer, own.buffer);
    assert.equal(pool.take(MIB).buffer, twice.buffer);
  });

  it("keeps at most MAX_FREE_BYTES of free buffers", () => {
    const pool = new AnswerPool("on");
    const frames = freed(pool, new Array<number>(MAX_FREE_BYTES / MIB + 4).fill(MIB));
    const again = new Set(frames.map(() => pool.take(MIB).buffer));
    const kept = frames.filter((frame) => again.has(frame.buffer)).length;
    assert.equal(kept, Math.floor(MAX_FREE_BYTES / sizeClassOf(MIB)));
  });
});

describe("sizeClassOf", () => {
  it("rounds up to a quarter of the size's power of two", () => {
    assert.equal(sizeClassOf(MIB), MIB);
    assert.equal(sizeClassOf(MIB + 1), MIB + MIB / 4);
    assert.equal(sizeClassOf(1.6 * MIB), 1.75 * MIB);
    assert.equal(sizeClassOf(64 * 1024 + 5), 80 * 1024);
  });
});

describe("answerPoolMode", () => {
  it("reads on, off and poison; unset or empty is on; anything else is refused by name", () => {
    assert.equal(answerPoolMode(undefined), "on");
    assert.equal(answerPoolMode(""), "on");
    assert.equal(answerPoolMode("off"), "off");
    assert.equal(answerPoolMode("poison"), "poison");
    assert.throws(
      () => answerPoolMode("Off"),
      (error: unknown) =>
        isReplicatorError(error, "CONFIG_INVALID") && /KAFKA_MIRROR_ANSWER_POOL: "Off"/.test(String(error)),
    );
  });
});
