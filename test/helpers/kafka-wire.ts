// The few Kafka wire primitives the SASL proxy reads and writes (big-endian integers, classic and
// compact strings/arrays, unsigned varints, tagged fields). Test-bed code: it parses only what
// the proxy rewrites and copies everything else byte for byte.

export class WireReader {
  offset = 0;
  constructor(readonly buf: Buffer) {}

  int16(): number {
    const v = this.buf.readInt16BE(this.offset);
    this.offset += 2;
    return v;
  }

  int32(): number {
    const v = this.buf.readInt32BE(this.offset);
    this.offset += 4;
    return v;
  }

  int64(): bigint {
    const v = this.buf.readBigInt64BE(this.offset);
    this.offset += 8;
    return v;
  }

  uvarint(): number {
    let value = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      const byte = this.buf.readUInt8(this.offset++);
      value |= (byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return value >>> 0;
    }
    throw new Error("varint too long");
  }

  /** Classic (int16 length) or compact (uvarint length + 1) nullable string. */
  string(compact: boolean): string | null {
    const length = compact ? this.uvarint() - 1 : this.int16();
    if (length < 0) return null;
    const s = this.buf.toString("utf8", this.offset, this.offset + length);
    this.offset += length;
    return s;
  }

  bytes(compact: boolean): Buffer {
    const length = compact ? this.uvarint() - 1 : this.int32();
    if (length < 0) return Buffer.alloc(0);
    const b = this.buf.subarray(this.offset, this.offset + length);
    this.offset += length;
    return b;
  }

  arrayLength(compact: boolean): number {
    return compact ? this.uvarint() - 1 : this.int32();
  }

  skipTaggedFields(): void {
    const count = this.uvarint();
    for (let i = 0; i < count; i++) {
      this.uvarint(); // tag
      this.offset += this.uvarint();
    }
  }

  rest(): Buffer {
    return this.buf.subarray(this.offset);
  }
}

export class WireWriter {
  readonly #parts: Buffer[] = [];

  int16(v: number): this {
    const b = Buffer.alloc(2);
    b.writeInt16BE(v);
    return this.raw(b);
  }

  int32(v: number): this {
    const b = Buffer.alloc(4);
    b.writeInt32BE(v);
    return this.raw(b);
  }

  int64(v: bigint): this {
    const b = Buffer.alloc(8);
    b.writeBigInt64BE(v);
    return this.raw(b);
  }

  uvarint(v: number): this {
    const bytes: number[] = [];
    let rest = v >>> 0;
    while (rest > 0x7f) {
      bytes.push((rest & 0x7f) | 0x80);
      rest >>>= 7;
    }
    bytes.push(rest);
    return this.raw(Buffer.from(bytes));
  }

  string(s: string | null, compact: boolean): this {
    if (s === null) return compact ? this.uvarint(0) : this.int16(-1);
    const b = Buffer.from(s, "utf8");
    (compact ? this.uvarint(b.length + 1) : this.int16(b.length)).raw(b);
    return this;
  }

  bytes(b: Buffer, compact: boolean): this {
    (compact ? this.uvarint(b.length + 1) : this.int32(b.length)).raw(b);
    return this;
  }

  arrayLength(n: number, compact: boolean): this {
    return compact ? this.uvarint(n + 1) : this.int32(n);
  }

  emptyTaggedFields(): this {
    return this.uvarint(0);
  }

  raw(b: Buffer): this {
    this.#parts.push(b);
    return this;
  }

  /** The bytes written, with the int32 size prefix a Kafka frame carries. */
  frame(): Buffer {
    const body = Buffer.concat(this.#parts);
    const size = Buffer.alloc(4);
    size.writeInt32BE(body.length);
    return Buffer.concat([size, body]);
  }

  bytesWritten(): Buffer {
    return Buffer.concat(this.#parts);
  }
}

/** Splits a byte stream into size-prefixed frames (payloads without the prefix). */
export class FrameSplitter {
  #pending: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Buffer[] {
    this.#pending = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    const frames: Buffer[] = [];
    while (this.#pending.length >= 4) {
      const size = this.#pending.readInt32BE(0);
      if (size < 0 || size > 100 * 1024 * 1024) throw new Error(`bad frame size ${size}`);
      if (this.#pending.length < 4 + size) break;
      frames.push(this.#pending.subarray(4, 4 + size));
      this.#pending = this.#pending.subarray(4 + size);
    }
    return frames;
  }
}

export function withSizePrefix(payload: Buffer): Buffer {
  const size = Buffer.alloc(4);
  size.writeInt32BE(payload.length);
  return Buffer.concat([size, payload]);
}
