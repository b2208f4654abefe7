// `npx tsx scripts/copy-floor.ts [--gib N] [--frame-kib N] [--rounds N]`: the CPU a node process
// spends only moving bytes between two loopback sockets, the floor under the bench's worker CPU
// per GiB. A child process (node with the functions' flags and malloc settings, unless
// GLIBC_TUNABLES is set: GLIBC_TUNABLES= gives glibc's defaults) reads N GiB of size-prefixed frames
// through the worker's own socket (framedSocketFactory: each frame in a fresh buffer, most of it
// read straight into it, the rest through one reused read buffer) and writes every frame to a
// second socket; in alternate rounds it also sums each frame with the native CRC-32C, as the
// worker checks every fetched batch. Prints the median round's user + system CPU seconds per GiB
// of each kind.
import { fork } from "node:child_process";
import net from "node:net";
import { parseArgs } from "node:util";
import { FUNCTION_MALLOC_TUNABLES, FUNCTION_NODE_FLAGS } from "../infra/node-flags.js";
import { loadNativeCrc32c } from "../lib/kafka/codec/crc32c.js";
import { framedSocketFactory } from "../lib/kafka/wire/framed-socket.js";

interface RoundResult {
  readonly cpuSeconds: number;
  readonly gib: number;
}

if (process.argv[2] === "forward")
  await forward(Number(process.argv[3]), Number(process.argv[4]), process.argv[5]);
else await main();

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      gib: { type: "string", default: "1" },
      "frame-kib": { type: "string", default: "1024" },
      rounds: { type: "string", default: "3" },
    },
  });
  const gib = positive("--gib", values.gib);
  const frameBytes = positive("--frame-kib", values["frame-kib"]) * 1024;
  const rounds = positive("--rounds", values.rounds);
  const results: Record<string, number[]> = { copy: [], "copy + crc32c": [] };
  for (let i = 0; i < rounds; i++) {
    for (const crc of [false, true]) {
      const round = await oneRound(gib, frameBytes, crc);
      results[crc ? "copy + crc32c" : "copy"]?.push(round.cpuSeconds / round.gib);
    }
  }
  for (const [kind, perGib] of Object.entries(results)) {
    const sorted = [...perGib].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)] as number;
    console.log(
      `${kind.padEnd(14)} ${median.toFixed(2)} CPU-s/GiB (rounds: ${perGib.map((v) => v.toFixed(2)).join(", ")})`,
    );
  }
}

function positive(name: string, value: string | undefined): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) {
    console.error(`${name} ${JSON.stringify(value)}: expected a whole number of at least 1`);
    process.exit(2);
  }
  return n;
}

/** One forwarder process over `gib` GiB: a source server that sends frames, a sink that drops them. */
async function oneRound(gib: number, frameBytes: number, crc: boolean): Promise<RoundResult> {
  const total = gib * 2 ** 30;
  const frame = Buffer.alloc(frameBytes, 7);
  frame.writeInt32BE(frameBytes - 4, 0);
  const sink = net.createServer((socket) => {
    socket.on("data", () => undefined);
    socket.on("end", () => socket.end());
  });
  const source = net.createServer((socket) => {
    let sent = 0;
    const pump = (): void => {
      while (sent < total) {
        sent += frameBytes;
        if (!socket.write(frame)) {
          socket.once("drain", pump);
          return;
        }
      }
      socket.end();
    };
    pump();
  });
  await Promise.all(
    [sink, source].map((server) => new Promise<void>((resolve) => server.listen(0, resolve))),
  );
  const port = (server: net.Server): number => (server.address() as net.AddressInfo).port;
  const child = fork(
    new URL(import.meta.url).pathname,
    ["forward", String(port(source)), String(port(sink)), crc ? "crc" : "plain"],
    {
      execArgv: [...process.execArgv, ...FUNCTION_NODE_FLAGS],
      env: { ...process.env, GLIBC_TUNABLES: process.env.GLIBC_TUNABLES ?? FUNCTION_MALLOC_TUNABLES },
    },
  );
  try {
    return await new Promise<RoundResult>((resolve, reject) => {
      child.once("message", (message) => resolve(message as RoundResult));
      child.once("exit", (code) => reject(new Error(`the forwarder exited with ${code} before reporting`)));
    });
  } finally {
    child.kill();
    await Promise.all([sink, source].map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

/** The child: reads frames from `sourcePort`, writes each to `sinkPort`, reports its CPU once the sink closes. */
async function forward(sourcePort: number, sinkPort: number, mode: string | undefined): Promise<void> {
  const crc32c = mode === "crc" ? loadNativeCrc32c() : null;
  if (crc32c instanceof Error) throw crc32c;
  const sink = net.connect(sinkPort);
  await new Promise((resolve) => sink.once("connect", resolve));
  const cpu = process.cpuUsage();
  let bytes = 0;
  let sum = 0;
  // Plaintext only: the factory hands a socket with `ssl` to the factory it is given.
  const source = framedSocketFactory(() => {
    throw new Error("no TLS here");
  })({ host: "127.0.0.1", port: sourcePort, onConnect: () => undefined });
  source.on("data", (frame: Buffer) => {
    bytes += frame.length;
    if (crc32c !== null) sum ^= crc32c(frame);
    if (!sink.write(frame)) {
      source.pause();
      sink.once("drain", () => source.resume());
    }
  });
  source.once("end", () => sink.end());
  sink.once("close", () => {
    const used = process.cpuUsage(cpu);
    // `sum` kept alive so that the CRC calls cannot be dropped as dead code.
    process.send?.({ cpuSeconds: (used.user + used.system) / 1e6, gib: bytes / 2 ** 30, sum });
  });
}
