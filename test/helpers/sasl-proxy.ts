// A SASL-terminating proxy in front of the mock Kafka cluster (which has no SASL listener): one
// listener per broker. A client connection must authenticate first: ApiVersions is relayed to
// the broker and its answer gains SaslHandshake v0-v1 and SaslAuthenticate v0-v2; SaslHandshake
// and SaslAuthenticate are answered here (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512: sasl-server.ts);
// any other request before that closes the connection, as Kafka does. Once authenticated, every
// request is relayed, and Metadata and FindCoordinator answers name the proxy's listeners, not
// the brokers', so every later connection comes back through the proxy.
// Not modelled: re-authentication (KIP-368), OAUTHBEARER, GSSAPI, quotas per user, ACLs.
import { createConnection, createServer, type Server, type Socket } from "node:net";
import {
  type AddressMap,
  API,
  rewriteApiVersions,
  rewriteFindCoordinator,
  rewriteMetadata,
} from "./kafka-rewrite.js";
import { FrameSplitter, WireReader, WireWriter, withSizePrefix } from "./kafka-wire.js";
import { listenOnLoopback } from "./net.js";
import {
  SASL_MECHANISMS,
  type SaslExchange,
  SaslFailure,
  type SaslMechanism,
  startExchange,
} from "./sasl-server.js";

const SASL_AUTHENTICATION_FAILED = 58;
const UNSUPPORTED_SASL_MECHANISM = 33;
const ILLEGAL_SASL_STATE = 34;

export interface SaslProxyOptions {
  /** The brokers behind the proxy: node id and where it really listens (`host:port`). */
  readonly brokers: readonly { readonly nodeId: number; readonly address: string }[];
  /** username -> password */
  readonly users: Readonly<Record<string, string>>;
  /** @default all three */
  readonly mechanisms?: readonly SaslMechanism[];
  /** SCRAM iteration count sent in server-first. @default 4096 (Kafka's minimum) */
  readonly scramIterations?: number;
  /**
   * Advertise SaslHandshake v0 only and no SaslAuthenticate, so clients send bare SASL tokens
   * after the handshake (KIP-43's v0 framing). @default false
   */
  readonly legacyHandshake?: boolean;
  /**
   * Leave Metadata and FindCoordinator answers alone (clients then go to the brokers directly,
   * unauthenticated): for showing that the "every request through the proxy" test catches it.
   * @default true
   */
  readonly rewriteAddresses?: boolean;
}

export interface SaslAttempt {
  readonly mechanism: string;
  readonly ok: boolean;
  readonly username?: string;
}

export interface SaslProxy {
  /** The proxy's listeners, in the order of `brokers`. */
  readonly bootstrapServers: string[];
  /** Every authentication that finished, in order. */
  readonly attempts: readonly SaslAttempt[];
  /** Requests relayed to a broker after authentication, for one API key. */
  relayed(apiKey: number): number;
  /** Switch the Metadata/FindCoordinator rewrite off or on for later answers (see rewriteAddresses). */
  setRewriteAddresses(on: boolean): void;
  stop(): Promise<void>;
}

interface ProxyContext {
  readonly users: ReadonlyMap<string, string>;
  readonly mechanisms: readonly SaslMechanism[];
  readonly iterations: number;
  readonly legacy: boolean;
  readonly addresses: AddressMap;
  rewriteAddresses: boolean;
  readonly attempts: SaslAttempt[];
  readonly relayed: Map<number, number>;
}

export async function startSaslProxy(opts: SaslProxyOptions): Promise<SaslProxy> {
  const addresses = new Map<number, { host: string; port: number }>();
  const ctx: ProxyContext = {
    users: new Map(Object.entries(opts.users)),
    mechanisms: opts.mechanisms ?? SASL_MECHANISMS,
    iterations: opts.scramIterations ?? 4096,
    legacy: opts.legacyHandshake ?? false,
    addresses,
    rewriteAddresses: opts.rewriteAddresses ?? true,
    attempts: [],
    relayed: new Map(),
  };
  const sockets = new Set<Socket>();
  const servers: Server[] = [];
  for (const broker of opts.brokers) {
    const server = createServer((client) => {
      const connection = new ProxiedConnection(client, broker.address, ctx);
      for (const s of connection.sockets) {
        sockets.add(s);
        s.once("close", () => sockets.delete(s));
      }
    });
    addresses.set(broker.nodeId, { host: "127.0.0.1", port: await listenOnLoopback(server) });
    servers.push(server);
  }
  return {
    bootstrapServers: opts.brokers.map((b) => {
      const a = addresses.get(b.nodeId);
      return `${a?.host}:${a?.port}`;
    }),
    attempts: ctx.attempts,
    relayed: (apiKey) => ctx.relayed.get(apiKey) ?? 0,
    setRewriteAddresses: (on) => {
      ctx.rewriteAddresses = on;
    },
    stop: async () => {
      for (const s of sockets) s.destroy();
      await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    },
  };
}

interface RequestHeader {
  readonly apiKey: number;
  readonly version: number;
  readonly correlationId: number;
}

class ProxiedConnection {
  readonly sockets: Socket[];
  #state: "unauthenticated" | "bare-tokens" | "authenticated" = "unauthenticated";
  #mechanism: SaslMechanism | undefined;
  #exchange: SaslExchange | undefined;
  readonly #pending = new Map<number, RequestHeader>();

  constructor(
    private readonly client: Socket,
    upstreamAddress: string,
    private readonly ctx: ProxyContext,
  ) {
    const [host, port] = splitAddress(upstreamAddress);
    this.upstream = createConnection({ host, port });
    this.sockets = [client, this.upstream];
    const fromClient = new FrameSplitter();
    const fromUpstream = new FrameSplitter();
    client.on("data", (chunk: Buffer) =>
      this.#guard(() => {
        for (const f of fromClient.push(chunk)) this.#onRequest(f);
      }),
    );
    this.upstream.on("data", (chunk: Buffer) =>
      this.#guard(() => {
        for (const f of fromUpstream.push(chunk)) this.#onResponse(f);
      }),
    );
    for (const s of this.sockets) {
      s.on("error", () => this.#close());
      s.on("close", () => this.#close());
    }
  }

  private readonly upstream: Socket;

  #guard(work: () => void): void {
    try {
      work();
    } catch {
      this.#close(); // a frame we cannot parse: drop the connection, as a broker would
    }
  }

  #close(): void {
    this.client.destroy();
    this.upstream.destroy();
  }

  #onRequest(frame: Buffer): void {
    if (this.#state === "bare-tokens") {
      this.#bareToken(frame);
      return;
    }
    const r = new WireReader(frame);
    const header = { apiKey: r.int16(), version: r.int16(), correlationId: r.int32() };
    r.string(false); // client id: a classic string in every request header version
    const sasl = header.apiKey === API.SaslHandshake || header.apiKey === API.SaslAuthenticate;
    if (this.#state === "authenticated" && !sasl) {
      this.ctx.relayed.set(header.apiKey, (this.ctx.relayed.get(header.apiKey) ?? 0) + 1);
      this.#relay(header, frame);
    } else if (this.#state === "authenticated") {
      this.#close(); // re-authentication (KIP-368) is not modelled
    } else if (header.apiKey === API.ApiVersions) {
      this.#relay(header, frame);
    } else if (header.apiKey === API.SaslHandshake) {
      this.#handshake(header, r);
    } else if (header.apiKey === API.SaslAuthenticate && this.#exchange && !this.ctx.legacy) {
      this.#authenticate(header, r);
    } else {
      this.#close(); // Kafka closes a connection that sends anything else before authenticating
    }
  }

  #relay(header: RequestHeader, frame: Buffer): void {
    if ([API.ApiVersions, API.Metadata, API.FindCoordinator].includes(header.apiKey as 3)) {
      this.#pending.set(header.correlationId, header);
    }
    this.upstream.write(withSizePrefix(frame));
  }

  #onResponse(frame: Buffer): void {
    const request = this.#pending.get(frame.readInt32BE(0));
    let payload = frame;
    if (request) {
      this.#pending.delete(request.correlationId);
      payload = this.#rewrite(request, frame);
    }
    this.client.write(withSizePrefix(payload));
  }

  #rewrite(request: RequestHeader, frame: Buffer): Buffer {
    if (request.apiKey === API.ApiVersions) {
      const sasl = this.ctx.legacy
        ? [{ apiKey: API.SaslHandshake, min: 0, max: 0 }]
        : [
            { apiKey: API.SaslHandshake, min: 0, max: 1 },
            { apiKey: API.SaslAuthenticate, min: 0, max: 2 },
          ];
      // FindCoordinator is capped at v3, the last one with a single coordinator to rewrite.
      return rewriteApiVersions(frame, request.version, [
        ...sasl,
        { apiKey: API.FindCoordinator, min: 0, max: 3 },
      ]);
    }
    if (!this.ctx.rewriteAddresses) return frame;
    if (request.apiKey === API.Metadata) return rewriteMetadata(frame, request.version, this.ctx.addresses);
    return rewriteFindCoordinator(frame, request.version, this.ctx.addresses);
  }

  /** SaslHandshake v0/v1 (never flexible): the mechanism, answered with the enabled list. */
  #handshake(header: RequestHeader, r: WireReader): void {
    const wanted = r.string(false) ?? "";
    const enabled = this.ctx.mechanisms.find((m) => m === wanted);
    const w = new WireWriter().int32(header.correlationId).int16(enabled ? 0 : UNSUPPORTED_SASL_MECHANISM);
    w.arrayLength(this.ctx.mechanisms.length, false);
    for (const m of this.ctx.mechanisms) w.string(m, false);
    this.client.write(w.frame());
    if (!enabled) return;
    this.#mechanism = enabled;
    this.#exchange = startExchange(enabled, this.ctx.users, this.ctx.iterations);
    if (header.version === 0) this.#state = "bare-tokens";
  }

  /** SaslAuthenticate v0-v2 (v2 flexible): one token of the exchange. */
  #authenticate(header: RequestHeader, r: WireReader): void {
    const flexible = header.version >= 2;
    if (flexible) r.skipTaggedFields(); // request header v2
    const token = r.bytes(flexible);
    const w = new WireWriter().int32(header.correlationId);
    if (flexible) w.emptyTaggedFields(); // response header v1
    const outcome = this.#step(token);
    w.int16(outcome.ok ? 0 : outcome.error).string(outcome.ok ? null : outcome.message, flexible);
    w.bytes(outcome.ok ? outcome.reply : Buffer.alloc(0), flexible);
    if (header.version >= 1) w.int64(0n); // session_lifetime_ms: no re-authentication
    if (flexible) w.emptyTaggedFields();
    if (outcome.ok) {
      this.client.write(w.frame());
    } else {
      this.client.end(w.frame()); // Kafka closes the connection after a failed authentication
    }
  }

  /** After SaslHandshake v0: bare size-prefixed tokens; a failure just closes the connection. */
  #bareToken(frame: Buffer): void {
    const outcome = this.#step(frame);
    if (outcome.ok) this.client.write(withSizePrefix(outcome.reply));
    else this.#close();
  }

  #step(token: Buffer): { ok: true; reply: Buffer } | { ok: false; error: number; message: string } {
    const mechanism = this.#mechanism ?? "none";
    if (!this.#exchange) return { ok: false, error: ILLEGAL_SASL_STATE, message: "no SaslHandshake yet" };
    try {
      const step = this.#exchange.step(token);
      if (step.username !== undefined) {
        this.#state = "authenticated";
        this.#exchange = undefined;
        this.ctx.attempts.push({ mechanism, ok: true, username: step.username });
      }
      return { ok: true, reply: step.reply };
    } catch (error) {
      if (!(error instanceof SaslFailure)) throw error;
      this.ctx.attempts.push({ mechanism, ok: false });
      return {
        ok: false,
        error: SASL_AUTHENTICATION_FAILED,
        message: `Authentication failed during authentication due to invalid credentials with SASL mechanism ${mechanism}`,
      };
    }
  }
}

function splitAddress(address: string): [string, number] {
  const at = address.lastIndexOf(":");
  return [address.slice(0, at), Number(address.slice(at + 1))];
}
