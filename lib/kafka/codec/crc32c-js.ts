/**
 * CRC-32C (Castagnoli) in JavaScript: the fallback of crc32c.ts, where the native package does
 * not load (or KAFKA_MIRROR_CRC32C=js asks for it). Node has no built-in for it (zlib.crc32 is
 * the other polynomial), so this is the table-driven slicing-by-16 algorithm: sixteen 256-entry
 * tables let the loop consume 16 bytes, read as four 32-bit words, per step. Reading words
 * instead of bytes doubled its speed. Callers use crc32c.ts, never this file.
 */
import { endianness } from "node:os";

const POLYNOMIAL = 0x82f63b78; // reflected 0x1EDC6F41
const STRIDE_TABLES = 16;

function buildTables(): Int32Array {
  const t = new Int32Array(STRIDE_TABLES * 256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLYNOMIAL : c >>> 1;
    t[i] = c;
  }
  for (let i = 0; i < 256; i++) {
    let c = t[i] as number;
    for (let k = 1; k < STRIDE_TABLES; k++) {
      c = (t[c & 0xff] as number) ^ (c >>> 8);
      t[k * 256 + i] = c;
    }
  }
  return t;
}

// One flat table; `as number` below is safe because every index is masked to 0..4095.
const T = buildTables();
// The word loop reads bytes in memory order as the low bits first, which is only true on
// little-endian hosts (x86-64 and arm64 Lambda both are); elsewhere the byte loop does it all.
const WORDS = endianness() === "LE";

/** CRC-32C of `buf[start..end)`, as an unsigned 32-bit number. */
export function jsCrc32c(buf: Uint8Array, start = 0, end = buf.length): number {
  let c = -1;
  let i = start;
  if (WORDS && end - start >= 64) {
    // Int32Array views need 4-byte aligned offsets: take the bytes before the first boundary one by one.
    while (((buf.byteOffset + i) & 3) !== 0) {
      c = (T[(c ^ (buf[i] as number)) & 0xff] as number) ^ (c >>> 8);
      i++;
    }
    const words = new Int32Array(buf.buffer, buf.byteOffset + i, (end - i) >>> 2);
    const stop = words.length & ~3;
    let w = 0;
    for (; w < stop; w += 4) {
      // Four words, the first (xored with the running CRC) through the highest tables.
      c =
        lookups(c ^ (words[w] as number), 12) ^
        lookups(words[w + 1] as number, 8) ^
        lookups(words[w + 2] as number, 4) ^
        lookups(words[w + 3] as number, 0);
    }
    i += w * 4;
  }
  while (i < end) {
    c = (T[(c ^ (buf[i] as number)) & 0xff] as number) ^ (c >>> 8);
    i++;
  }
  return ~c >>> 0;
}

/** One word's four bytes, lowest first, through tables `table + 3` down to `table`. */
function lookups(x: number, table: number): number {
  return (
    (T[(table + 3) * 256 + (x & 0xff)] as number) ^
    (T[(table + 2) * 256 + ((x >>> 8) & 0xff)] as number) ^
    (T[(table + 1) * 256 + ((x >>> 16) & 0xff)] as number) ^
    (T[table * 256 + (x >>> 24)] as number)
  );
}
