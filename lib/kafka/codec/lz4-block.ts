/**
 * The LZ4 block compressor behind our LZ4 frames (lz4.ts): greedy, one hash table of 4-byte
 * sequences, as the reference "fast" compressor. Ours because lz4js 0.2.0's breaks the block
 * format's end rules: it lets a match start 10 or 11 bytes before the end of a block, where the
 * format asks for at least 12 (MFLIMIT); the reference decoder that Kafka's broker runs (lz4-java,
 * LZ4_decompress_safe) then refuses the block ("Error decoding offset ... of input buffer",
 * UNKNOWN_SERVER_ERROR to the producer), and so would librdkafka. The rules kept here:
 * - the last sequence holds literals only, and the last 5 bytes of a block are literals;
 * - no match starts less than 12 bytes before the end of the block;
 * - a match refers back at most 65,535 bytes, never before the block's start (independent blocks).
 */

const MIN_MATCH = 4;
const LAST_LITERALS = 5;
const MF_LIMIT = 12;
const MAX_DISTANCE = 0xffff;
const HASH_BITS = 16;
/** After 2^SKIP_TRIGGER misses in a row the search steps over bytes faster (incompressible data). */
const SKIP_TRIGGER = 6;

/** The most a block of `length` bytes can take compressed (LZ4_compressBound). */
export function lz4BlockBound(length: number): number {
  return length + Math.floor(length / 255) + 16;
}

/**
 * Compresses `src[start, end)` as one LZ4 block into `dst` (at least lz4BlockBound long) from
 * offset 0; returns the compressed length. `table` (2^16 entries) is scratch space.
 */
export function lz4CompressBlock(
  src: Buffer,
  start: number,
  end: number,
  dst: Buffer,
  table: Int32Array,
): number {
  table.fill(-1);
  const matchEnd = end - LAST_LITERALS;
  const lastMatchStart = end - MF_LIMIT;
  let out = 0;
  let anchor = start;
  let at = start;
  let misses = 1 << SKIP_TRIGGER;
  while (at <= lastMatchStart) {
    const sequence = read32(src, at);
    const slot = Math.imul(sequence, 2654435761) >>> (32 - HASH_BITS);
    const candidate = table[slot] ?? -1;
    table[slot] = at;
    if (candidate < 0 || at - candidate > MAX_DISTANCE || read32(src, candidate) !== sequence) {
      at += misses++ >> SKIP_TRIGGER;
      continue;
    }
    misses = 1 << SKIP_TRIGGER;
    let length = MIN_MATCH;
    while (at + length < matchEnd && src[candidate + length] === src[at + length]) length++;
    out = writeSequence(dst, out, src, anchor, at, at - candidate, length - MIN_MATCH);
    at += length;
    anchor = at;
  }
  return writeSequence(dst, out, src, anchor, end, 0, -1);
}

/** Four bytes as one number, little-endian; callers stay 12 bytes inside the block. */
function read32(src: Buffer, at: number): number {
  return (
    ((src[at] as number) | ((src[at + 1] as number) << 8) | ((src[at + 2] as number) << 16)) +
    (src[at + 3] as number) * 0x1000000
  );
}

/**
 * One sequence: the literals `src[from, to)`, then a match of `offset` and `matchCode` (length
 * minus 4); `matchCode` -1 ends the block with the literals alone.
 */
function writeSequence(
  dst: Buffer,
  out: number,
  src: Buffer,
  from: number,
  to: number,
  offset: number,
  matchCode: number,
): number {
  const literals = to - from;
  const token = out;
  let at = out + 1;
  dst[token] = (Math.min(literals, 15) << 4) | (matchCode < 0 ? 0 : Math.min(matchCode, 15));
  if (literals >= 15) at = writeLength(dst, at, literals - 15);
  src.copy(dst, at, from, to);
  at += literals;
  if (matchCode < 0) return at;
  dst[at++] = offset & 0xff;
  dst[at++] = offset >>> 8;
  if (matchCode >= 15) at = writeLength(dst, at, matchCode - 15);
  return at;
}

/** A length's continuation bytes: 255 while more follows, then the rest. */
function writeLength(dst: Buffer, at: number, rest: number): number {
  let left = rest;
  while (left >= 255) {
    dst[at++] = 255;
    left -= 255;
  }
  dst[at++] = left;
  return at;
}
