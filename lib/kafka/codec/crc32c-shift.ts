/**
 * The CRC-32C of a region whose first bytes were changed, from the region's old CRC, without
 * reading the rest of it: pass-through (pass-through.ts) rewrites only a batch's producer fields,
 * all within the first 36 bytes of the CRC'd region, so its cost stays the same whatever the
 * batch's size.
 *
 * A CRC is linear over GF(2): for two inputs A and B of the same length,
 * crc(A) XOR crc(B) = raw(A XOR B), where raw is the CRC without its initial value and final XOR
 * (init and xorout depend on the length only, so they cancel). A XOR B is the change `d` of the
 * first bytes followed by m zero bytes, and raw(d followed by m zeros) is raw(d) times x^(8m)
 * modulo the polynomial: each zero byte multiplies the register by x^8. x^(8m) is a product of
 * the precomputed squarings x^(2^k), one per set bit of 8m, as zlib's crc32_combine does; so the
 * new CRC is crc(A) XOR raw(d) x^(8m), O(log m).
 *
 * Polynomials are in the reflected representation the CRC register uses: bit 31 is x^0.
 */
import { crc32c } from "./crc32c.js";

const POLYNOMIAL = 0x82f63b78; // reflected 0x1EDC6F41
const X_TO_THE_0 = 0x80000000;

/** a * b modulo the polynomial (zlib's multmodp). */
function multiplyModP(a: number, b: number): number {
  let m = X_TO_THE_0;
  let p = 0;
  let x = b;
  for (;;) {
    if ((a & m) !== 0) {
      p ^= x;
      if ((a & (m - 1)) === 0) break;
    }
    m >>>= 1;
    x = x & 1 ? (x >>> 1) ^ POLYNOMIAL : x >>> 1;
  }
  return p >>> 0;
}

/**
 * x^(2^k) modulo the polynomial, k = 0..55: x^1, then each the square of the one before; enough
 * for any safe integer count of bytes (8 * 2^53 = 2^56).
 */
const X_TO_THE_2_TO_THE: Uint32Array = (() => {
  const table = new Uint32Array(56);
  let p = X_TO_THE_0 >>> 1; // x^1
  for (let k = 0; k < table.length; k++) {
    table[k] = p;
    p = multiplyModP(p, p);
  }
  return table;
})();

/** x^(8 * bytes) modulo the polynomial: what `bytes` zero bytes multiply a raw CRC by. */
function zeroBytesOperator(bytes: number): number {
  let p = X_TO_THE_0;
  // x^(8n) = product of x^(2^(k+3)) over the set bits k of n; n < 2^53, so step by division.
  let n = bytes;
  for (let k = 3; n > 0; k++, n = Math.floor(n / 2)) {
    if (n % 2 === 1) p = multiplyModP(X_TO_THE_2_TO_THE[k] as number, p);
  }
  return p;
}

/** The raw CRC register `raw` after `bytes` more zero bytes. */
export function crc32cZeroExtend(raw: number, bytes: number): number {
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw new RangeError(`cannot extend by ${bytes} bytes`);
  return multiplyModP(zeroBytesOperator(bytes), raw);
}

const zeroRuns = new Map<number, number>();

/** crc32c of `length` zero bytes, which the raw CRC of a change cancels out. */
function crcOfZeros(length: number): number {
  let crc = zeroRuns.get(length);
  if (crc === undefined) {
    crc = crc32c(new Uint8Array(length));
    zeroRuns.set(length, crc);
  }
  return crc;
}

/**
 * The CRC-32C of a region of `regionLength` bytes whose CRC was `crc` and whose first bytes
 * `before` became `after` (same length, at most regionLength); the rest of the region is not read.
 */
export function crc32cAfterChange(
  crc: number,
  before: Uint8Array,
  after: Uint8Array,
  regionLength: number,
): number {
  const length = before.length;
  if (after.length !== length || length > regionLength) {
    throw new RangeError("a change must keep its length and lie within the region");
  }
  const change = new Uint8Array(length);
  for (let i = 0; i < length; i++) change[i] = (before[i] as number) ^ (after[i] as number);
  const raw = (crc32c(change) ^ crcOfZeros(length)) >>> 0;
  return (crc ^ crc32cZeroExtend(raw, regionLength - length)) >>> 0;
}
