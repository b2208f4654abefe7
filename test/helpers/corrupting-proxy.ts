// A proxy in front of a Kafka cluster (the mock or real brokers) that can change one byte of the
// record batches a Fetch answer carries, as a faulty link or disk would: one listener per broker,
// every request relayed, Metadata answers naming the proxy's listeners so clients stay on it.
// When armed, a Fetch answer (v4-v11, the versions before flexible encoding) that carries the
// chosen batch (topic and base offset) whole has a byte inside that batch's last record flipped:
// its stored CRC no longer matches it. Nothing else is parsed or changed.
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { metadata } from "./kafka-raw-requests.js";
import { type AddressMap, API, rewriteMetadata } from "./kafka-rewrite.js";
import { FrameSplitter, WireReader, withSizePrefix } from "./kafka-wire.js";
import { listenOnLoopback } from "./net.js";

const FETCH = 1;

export interface CorruptingProxy {
  readonly bootstrapServers: string[];
  /** The next `count` Fetch answers that carry the batch of `topic` at `baseOffset` have it changed. */
  corruptBatch(topic: string, baseOffset: number, count: number): void;
  /** Batches changed so far. */
  corrupted(): number;
  stop(): Promise<void>;
}

interface Context {
  readonly addresses: AddressMap;
  topic: string | null;
  baseOffset: bigint;
  left: number;
  corrupted: number;
}

/** A proxy for the cluster behind `bootstrap` (`host:port`), one listener per broker it names. */
export async function startCorruptingProxy(bootstrap: string): Promise<CorruptingProxy> {
  const { brokers } = await metadata(bootstrap, []);
  const addresses = new Map<number, { host: string; port: number }>();
  const ctx: Context = { addresses, topic: null, baseOffset: -1n, left: 0, corrupted: 0 };
  const sockets = new Set<Socket>();
  const servers: Server[] = [];
  for (const broker of brokers) {
    const server = createServer((client) => {
      const upstream = createConnection({ host: broker.host, port: broker.port });
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.once("close", () => sockets.delete(s));
      }
      relay(client, upstream, ctx);
    });
    addresses.set(broker.nodeId, { host: "127.0.0.1", port: await listenOnLoopback(server) });
    servers.push(server);
  }
  return {
    bootstrapServers: [...addresses.values()].map((a) => `${a.host}:${a.port}`),
    corruptBatch: (topic, baseOffset, count) => {
      ctx.topic = topic;
      ctx.baseOffset = BigInt(baseOffset);
      ctx.left = count;
    },
    corrupted: () => ctx.corrupted,
    stop: async () => {
      for (const s of sockets) s.destroy();
      await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    },
  };
}

function relay(client: Socket, upstream: Socket, ctx: Context): void {
  const asked = new Map<number, { apiKey: number; version: number }>();
  const fromClient = new FrameSplitter();
  const fromUpstream = new FrameSplitter();
  const close = () => {
    client.destroy();
    upstream.destroy();
  };
  // A frame the proxy cannot read drops the connection (the client sees a broker go away)
  // rather than throw out of the socket's event handler.
  const guarded = (work: () => void) => {
    try {
      work();
    } catch {
      close();
    }
  };
  client.on("data", (chunk: Buffer) =>
    guarded(() => {
      for (const frame of fromClient.push(chunk)) {
        const apiKey = frame.readInt16BE(0);
        if (apiKey === API.Metadata || apiKey === FETCH) {
          asked.set(frame.readInt32BE(4), { apiKey, version: frame.readInt16BE(2) });
        }
        upstream.write(withSizePrefix(frame));
      }
    }),
  );
  upstream.on("data", (chunk: Buffer) =>
    guarded(() => {
      for (const frame of fromUpstream.push(chunk)) {
        const request = asked.get(frame.readInt32BE(0));
        asked.delete(frame.readInt32BE(0));
        let payload = frame;
        if (request?.apiKey === API.Metadata)
          payload = rewriteMetadata(frame, request.version, ctx.addresses);
        if (request?.apiKey === FETCH && ctx.left > 0 && corruptChosenBatch(frame, request.version, ctx)) {
          ctx.left--;
          ctx.corrupted++;
        }
        client.write(withSizePrefix(payload));
      }
    }),
  );
  for (const s of [client, upstream]) {
    s.on("error", close);
    s.on("close", close);
  }
}

/** Flips a byte in the last record of the chosen batch, if the answer carries it whole; whether it did. */
function corruptChosenBatch(payload: Buffer, version: number, ctx: Context): boolean {
  if (version < 4 || version > 11) throw new Error(`Fetch v${version}: the proxy reads v4-v11 only`);
  const r = new WireReader(payload);
  r.int32(); // correlation id
  r.int32(); // throttle_time_ms
  if (version >= 7) r.offset += 6; // error_code, session_id
  for (let topics = r.arrayLength(false); topics > 0; topics--) {
    const topic = r.string(false);
    for (let partitions = r.arrayLength(false); partitions > 0; partitions--) {
      r.offset += 4 + 2 + 8 + 8; // partition, error_code, high_watermark, last_stable_offset
      if (version >= 5) r.offset += 8; // log_start_offset
      const aborted = r.arrayLength(false);
      if (aborted > 0) r.offset += aborted * 16;
      if (version >= 11) r.offset += 4; // preferred_read_replica
      const records = r.bytes(false);
      if (topic !== ctx.topic) continue;
      // Entries: baseOffset int64, length int32, then length bytes; a cut last one is left.
      for (let at = 0; at + 12 <= records.length; at += 12 + records.readInt32BE(at + 8)) {
        const end = at + 12 + records.readInt32BE(at + 8);
        if (records.readBigInt64BE(at) !== ctx.baseOffset || end > records.length) continue;
        records[end - 2] = (records[end - 2] as number) ^ 0x01;
        return true;
      }
    }
  }
  return false;
}
