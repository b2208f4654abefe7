/**
 * Zigzag varints as the Kafka record format uses them (the protobuf encoding): varint for int32
 * fields, varlong for int64 fields. Readers and writers work on a position instead of returning
 * small objects, because they run several times per record on the replicator's hot path.
 */
import { ReplicatorError } from "../../errors.js";

// A varlong of up to 7 bytes carries at most 49 bits, which a double holds exactly; longer ones
// take the BigInt path, which is rare (timestamp deltas beyond ~8,900 years).
const FAST_VARLONG_BYTES = 7;
const TWO_POW_52 = 2 ** 52;

function corrupt(message: string): ReplicatorError {
  return new ReplicatorError("CORRUPT_BATCH", message);
}

/**
 * Reads varints and length-prefixed byte fields from `buf` between `pos` and `end`. Reading past
 * `end` throws CORRUPT_BATCH. Indexing past the buffer yields `undefined`, which ends a varint
 * (`undefined >= 0x80` is false) and is then caught by the single `pos > end` check, so the inner
 * loops need no per-byte bounds test.
 */
export class ByteReader {
  buf: Buffer;
  pos: number;
  end: number;

  constructor(buf: Buffer, pos: number, end: number) {
    this.buf = buf;
    this.pos = pos;
    this.end = end;
  }

  varint(): number {
    const buf = this.buf;
    let pos = this.pos;
    let b = buf[pos++] as number;
    let u = b & 0x7f;
    if (b >= 0x80) {
      b = buf[pos++] as number;
      u |= (b & 0x7f) << 7;
      if (b >= 0x80) {
        b = buf[pos++] as number;
        u |= (b & 0x7f) << 14;
        if (b >= 0x80) {
          b = buf[pos++] as number;
          u |= (b & 0x7f) << 21;
          if (b >= 0x80) {
            b = buf[pos++] as number;
            if (b >= 0x80) throw corrupt("varint longer than 5 bytes");
            u |= b << 28;
          }
        }
      }
    }
    if (pos > this.end) throw corrupt("varint runs past the end of its record");
    this.pos = pos;
    return (u >>> 1) ^ -(u & 1);
  }

  /** A zigzag varlong as a JS number; throws CORRUPT_BATCH beyond Number.MAX_SAFE_INTEGER. */
  varlong(): number {
    const buf = this.buf;
    const start = this.pos;
    let pos = start;
    let b = buf[pos++] as number;
    let u = b & 0x7f;
    let scale = 0x80;
    let n = 1;
    while (b >= 0x80 && n < FAST_VARLONG_BYTES) {
      b = buf[pos++] as number;
      u += (b & 0x7f) * scale;
      scale *= 0x80;
      n++;
    }
    if (b >= 0x80) return this.#bigVarlong(start);
    if (pos > this.end) throw corrupt("varlong runs past the end of its record");
    this.pos = pos;
    return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
  }

  #bigVarlong(start: number): number {
    const buf = this.buf;
    let pos = start;
    let u = 0n;
    let shift = 0n;
    let b: number;
    do {
      if (shift > 63n) throw corrupt("varlong longer than 10 bytes");
      b = buf[pos++] as number;
      u |= BigInt(b & 0x7f) << shift;
      shift += 7n;
    } while (b >= 0x80);
    if (pos > this.end) throw corrupt("varlong runs past the end of its record");
    u = BigInt.asUintN(64, u);
    const value = (u >> 1n) ^ -(u & 1n);
    if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
      throw corrupt("varlong beyond Number.MAX_SAFE_INTEGER");
    }
    this.pos = pos;
    return Number(value);
  }

  /** `length` bytes as a zero-copy view. */
  take(length: number): Buffer {
    const start = this.pos;
    const stop = start + length;
    if (length < 0 || stop > this.end) throw corrupt("byte field runs past the end of its record");
    this.pos = stop;
    return this.buf.subarray(start, stop);
  }

  /** A varint length then that many bytes; length -1 is null. */
  nullableBytes(): Buffer | null {
    const length = this.varint();
    if (length === -1) return null;
    return this.take(length);
  }
}

/** Bytes a zigzag varint takes; `value` must be an int32. */
export function sizeOfVarint(value: number): number {
  const u = ((value << 1) ^ (value >> 31)) >>> 0;
  if (u < 0x80) return 1;
  if (u < 0x4000) return 2;
  if (u < 0x200000) return 3;
  if (u < 0x10000000) return 4;
  return 5;
}

/** Writes a zigzag varint (int32) at `pos`; returns the position after it. */
export function writeVarint(buf: Buffer, pos: number, value: number): number {
  let u = ((value << 1) ^ (value >> 31)) >>> 0;
  while (u >= 0x80) {
    buf[pos++] = (u & 0x7f) | 0x80;
    u >>>= 7;
  }
  buf[pos++] = u;
  return pos;
}

function isInt32(value: number): boolean {
  return (value | 0) === value;
}

/** Zigzag of a safe integer, exact because |value| < 2^52 keeps 2|value| within 53 bits. */
function zigzagNumber(value: number): number {
  return value >= 0 ? value * 2 : -value * 2 - 1;
}

function zigzagBig(value: number): bigint {
  const v = BigInt(value);
  return BigInt.asUintN(64, (v << 1n) ^ (v >> 63n));
}

/** Bytes a zigzag varlong takes; `value` must be a safe integer. */
export function sizeOfVarlong(value: number): number {
  if (isInt32(value)) return sizeOfVarint(value);
  if (Math.abs(value) < TWO_POW_52) {
    let u = zigzagNumber(value);
    let size = 1;
    while (u >= 0x80) {
      u = Math.floor(u / 0x80);
      size++;
    }
    return size;
  }
  let u = zigzagBig(value);
  let size = 1;
  while (u >= 0x80n) {
    u >>= 7n;
    size++;
  }
  return size;
}

/** Writes a zigzag varlong at `pos`; `value` must be a safe integer. Returns the position after it. */
export function writeVarlong(buf: Buffer, pos: number, value: number): number {
  if (isInt32(value)) return writeVarint(buf, pos, value);
  if (Math.abs(value) < TWO_POW_52) {
    let u = zigzagNumber(value);
    while (u >= 0x80) {
      buf[pos++] = (u % 0x80) | 0x80;
      u = Math.floor(u / 0x80);
    }
    buf[pos++] = u;
    return pos;
  }
  let u = zigzagBig(value);
  while (u >= 0x80n) {
    buf[pos++] = Number(u & 0x7fn) | 0x80;
    u >>= 7n;
  }
  buf[pos++] = Number(u);
  return pos;
}
