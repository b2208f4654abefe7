/**
 * CRC-32C (Castagnoli), the checksum of Kafka's v2 record batches. Node has no built-in for it
 * (zlib.crc32 is the other polynomial), so this is the table-driven slicing-by-8 algorithm: eight
 * 256-entry tables let the loop consume 8 bytes per step.
 */

const POLYNOMIAL = 0x82f63b78; // reflected 0x1EDC6F41

function buildTables(): Int32Array {
  const t = new Int32Array(8 * 256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLYNOMIAL : c >>> 1;
    t[i] = c;
  }
  for (let i = 0; i < 256; i++) {
    let c = t[i] as number;
    for (let k = 1; k < 8; k++) {
      c = (t[c & 0xff] as number) ^ (c >>> 8);
      t[k * 256 + i] = c;
    }
  }
  return t;
}

// One flat table; `as number` below is safe because every index is masked to 0..2047.
const T = buildTables();

/** CRC-32C of `buf[start..end)`, as an unsigned 32-bit number. */
export function crc32c(buf: Uint8Array, start = 0, end = buf.length): number {
  let c = -1;
  let i = start;
  const stop8 = end - ((end - start) & 7);
  while (i < stop8) {
    c ^=
      (buf[i] as number) |
      ((buf[i + 1] as number) << 8) |
      ((buf[i + 2] as number) << 16) |
      ((buf[i + 3] as number) << 24);
    c =
      (T[1792 + (c & 0xff)] as number) ^
      (T[1536 + ((c >>> 8) & 0xff)] as number) ^
      (T[1280 + ((c >>> 16) & 0xff)] as number) ^
      (T[1024 + (c >>> 24)] as number) ^
      (T[768 + (buf[i + 4] as number)] as number) ^
      (T[512 + (buf[i + 5] as number)] as number) ^
      (T[256 + (buf[i + 6] as number)] as number) ^
      (T[buf[i + 7] as number] as number);
    i += 8;
  }
  while (i < end) {
    c = (T[(c ^ (buf[i] as number)) & 0xff] as number) ^ (c >>> 8);
    i++;
  }
  return ~c >>> 0;
}
