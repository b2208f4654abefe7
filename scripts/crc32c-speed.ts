// `npx tsx scripts/crc32c-speed.ts [--rounds N]`: how fast each CRC-32C implementation of
// lib/kafka/codec/crc32c.ts sums 64 B, 1 KiB, 16 KiB and 1 MiB on this machine. Both run on the
// same random buffers at an odd offset (as a batch inside a fetch response lies), in alternating
// rounds so a busy neighbour slows both alike; each round sums about 256 MiB; the median round
// is printed, in GB/s, and the native one's multiple of the JavaScript one's.
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { type Crc32cFunction, loadNativeCrc32c } from "../lib/kafka/codec/crc32c.js";
import { jsCrc32c } from "../lib/kafka/codec/crc32c-js.js";

const SIZES = [64, 1024, 16 * 1024, 1024 * 1024];
const BYTES_PER_ROUND = 256 * 1024 * 1024;
const OFFSET = 3;

const { values } = parseArgs({ options: { rounds: { type: "string", default: "7" } } });
const rounds = Number(values.rounds);
const native = loadNativeCrc32c();
if (native instanceof Error) {
  console.error(`the native implementation did not load: ${native.message}`);
  process.exit(1);
}
const implementations: [string, Crc32cFunction][] = [
  ["js", jsCrc32c],
  ["native", native],
];

/** GB/s of one round: `buf[OFFSET..OFFSET + size)` summed until BYTES_PER_ROUND. */
function round(crc32c: Crc32cFunction, buf: Buffer, size: number): number {
  const calls = Math.max(1, Math.floor(BYTES_PER_ROUND / size));
  let sink = 0;
  const started = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) sink = (sink + crc32c(buf, OFFSET, OFFSET + size)) >>> 0;
  const ns = Number(process.hrtime.bigint() - started);
  if (sink === 0.5) console.log(sink); // never: keeps the loop's result alive
  return (calls * size) / ns;
}

const median = (xs: number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

for (const size of SIZES) {
  const buf = randomBytes(size + 2 * OFFSET);
  const speeds = new Map(implementations.map(([name]) => [name, [] as number[]]));
  for (const [, f] of implementations) round(f, buf, size); // warm-up: JIT, first-call costs
  for (let r = 0; r < rounds; r++) {
    for (const [name, f] of implementations) speeds.get(name)?.push(round(f, buf, size));
  }
  const js = median(speeds.get("js") ?? []);
  const nat = median(speeds.get("native") ?? []);
  console.log(
    `${String(size).padStart(8)} B  js ${js.toFixed(2)} GB/s  native ${nat.toFixed(2)} GB/s  x${(nat / js).toFixed(1)}`,
  );
}
