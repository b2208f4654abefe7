/**
 * Bytes of Kafka's flexible versions (KIP-482): unsigned varints, compact strings and arrays,
 * tagged fields. kafkajs 2.2.4's Encoder types do not cover them, so requests that need them are
 * laid out here and sent with connection.ts's sendBody.
 */
import { ReplicatorError } from "../../errors.js";

export class FlexWriter {
  readonly #parts: Buffer[] = [];

  int8(value: number): this {
    const b = Buffer.alloc(1);
    b.writeInt8(value);
    return this.#push(b);
  }

  int32(value: number): this {
    const b = Buffer.alloc(4);
    b.writeInt32BE(value);
    return this.#push(b);
  }

  uvarint(value: number): this {
    const bytes: number[] = [];
    let v = value >>> 0;
    while (v >= 0x80) {
      bytes.push((v & 0x7f) | 0x80);
      v >>>= 7;
    }
    bytes.push(v);
    return this.#push(Buffer.from(bytes));
  }

  compactString(value: string): this {
    const bytes = Buffer.from(value, "utf8");
    return this.uvarint(bytes.length + 1).#push(bytes);
  }

  zeroUuid(): this {
    return this.#push(Buffer.alloc(16));
  }

  /** No tagged fields. */
  noTags(): this {
    return this.uvarint(0);
  }

  toBuffer(): Buffer {
    return Buffer.concat(this.#parts);
  }

  #push(b: Buffer): this {
    this.#parts.push(b);
    return this;
  }
}

export class FlexReader {
  readonly #buf: Buffer;
  #pos = 0;

  constructor(buf: Buffer) {
    this.#buf = buf;
  }

  int8(): number {
    return this.#at(1, (p) => this.#buf.readInt8(p));
  }

  int16(): number {
    return this.#at(2, (p) => this.#buf.readInt16BE(p));
  }

  int32(): number {
    return this.#at(4, (p) => this.#buf.readInt32BE(p));
  }

  uvarint(): number {
    let result = 0;
    for (let shift = 0; shift <= 28; shift += 7) {
      const byte = this.#at(1, (p) => this.#buf.readUInt8(p));
      result += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return result;
    }
    throw malformed("varint longer than 5 bytes");
  }

  /** A compact nullable string. */
  compactString(): string | null {
    const length = this.uvarint();
    if (length === 0) return null;
    return this.#at(length - 1, (p) => this.#buf.toString("utf8", p, p + length - 1));
  }

  /** 16 bytes as 32 hex digits; all zeros (no id) as null. */
  uuid(): string | null {
    const hex = this.#at(16, (p) => this.#buf.toString("hex", p, p + 16));
    return /^0+$/.test(hex) ? null : hex;
  }

  /** A compact array; null arrays read as empty. */
  compactArray<T>(item: (r: FlexReader) => T): T[] {
    const length = this.uvarint();
    const out: T[] = [];
    for (let i = 0; i < length - 1; i++) out.push(item(this));
    return out;
  }

  skipTags(): void {
    const count = this.uvarint();
    for (let i = 0; i < count; i++) {
      this.uvarint(); // tag
      const size = this.uvarint();
      this.#at(size, () => undefined);
    }
  }

  #at<T>(size: number, read: (pos: number) => T): T {
    if (this.#pos + size > this.#buf.length) throw malformed(`response ends before byte ${this.#pos + size}`);
    const value = read(this.#pos);
    this.#pos += size;
    return value;
  }
}

function malformed(problem: string): ReplicatorError {
  return new ReplicatorError("KAFKA_RETRIABLE", `malformed flexible-version response: ${problem}`);
}
