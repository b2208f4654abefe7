/**
 * CRC-32 (IEEE 802.3, the zlib polynomial), the checksum of magic 0 and 1 messages. v2 batches
 * use CRC-32C instead (crc32c.ts). Node's zlib.crc32 arrived in 20.15 and we support 20.11, so
 * this is the plain byte-wise table loop: legacy message sets are rare enough that speed is moot.
 */
const POLYNOMIAL = 0xedb88320; // reflected 0x04C11DB7

const TABLE = (() => {
  const t = new Int32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLYNOMIAL : c >>> 1;
    t[i] = c;
  }
  return t;
})();

/** CRC-32 of `buf[start..end)`, as an unsigned 32-bit number. */
export function crc32(buf: Uint8Array, start = 0, end = buf.length): number {
  let c = -1;
  for (let i = start; i < end; i++) c = (TABLE[(c ^ (buf[i] as number)) & 0xff] as number) ^ (c >>> 8);
  return ~c >>> 0;
}
