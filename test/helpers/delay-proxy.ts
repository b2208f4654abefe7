/**
 * A TCP proxy on loopback that can hold bytes for a while, then pass them on in order: latency
 * bursts in front of a real server (the chaos run puts it before DynamoDB Local, so lease renewals
 * and checkpoints land late). Nothing is parsed: the proxy sees chunks, never requests.
 *
 * Close rules, so a held request never arrives half or after its client gave up:
 * - The client closes (FIN, reset or error): bytes still held for the server are dropped and the
 *   server connection is destroyed. Node's `socket.destroy()` sends a plain FIN, so a client that
 *   gave up and one that half-closed look alike; HTTP clients do not half-close.
 * - The server closes: bytes still held for the client are delivered when their hold ends, then
 *   the client connection is ended. A server that cannot be reached closes the client at once.
 */
import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";

export interface DelayProxyOptions {
  readonly upstreamHost?: string;
  readonly upstreamPort: number;
}

/** Which bytes a burst holds. */
export type HoldDirection = "both" | "requests";

export interface HoldOptions {
  /**
   * "both": every byte of a held connection, either way; "requests": only client-to-server bytes
   * (new requests wait, answers to requests already delivered still flow). @default "both"
   */
  readonly direction?: HoldDirection;
  /**
   * Asked once per open connection: true holds that one. Without it the burst holds every
   * connection, those opened during it included.
   */
  readonly pick?: () => boolean;
}

export interface DelayProxy {
  readonly port: number;
  /** `http://127.0.0.1:<port>`, for an SDK endpoint. */
  readonly endpoint: string;
  /** Holds bytes from now for `durationMs`; bursts overlap by the later end. Returns the connections held. */
  hold(durationMs: number, options?: HoldOptions): number;
  /** Connections open now. */
  connections(): number;
  /** Chunks held so far, delivered after their hold, dropped because their client left or their server did. */
  stats(): DelayStats;
  stop(): Promise<void>;
}

export interface DelayStats {
  held: number;
  delivered: number;
  dropped: number;
  orphaned: number;
}

/** One direction of one connection: chunks wait here while held, and leave in arrival order. */
class Link {
  heldUntil = 0;
  private readonly queue: Buffer[] = [];
  private timer: NodeJS.Timeout | undefined;
  private ending = false;

  constructor(
    private readonly to: Socket,
    private readonly globalHeldUntil: () => number,
    private readonly stats: DelayStats,
  ) {}

  push(chunk: Buffer): void {
    if (this.queue.length === 0 && this.releaseAt() <= Date.now()) this.to.write(chunk);
    else {
      this.stats.held++;
      this.queue.push(chunk);
      this.schedule();
    }
  }

  /** Ends the destination once every held chunk went out. */
  endAfterFlush(): void {
    this.ending = true;
    if (this.queue.length === 0) this.to.end();
    else this.schedule();
  }

  /** Drops whatever is held: its sender is gone. */
  drop(why: "dropped" | "orphaned" = "dropped"): void {
    this.stats[why] += this.queue.length;
    this.queue.length = 0;
    this.ending = false;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** A new or longer burst: wake up at its end (a timer set for an earlier end re-checks anyway). */
  schedule(): void {
    if (this.timer !== undefined || (this.queue.length === 0 && !this.ending)) return;
    const wait = Math.max(0, this.releaseAt() - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, wait);
  }

  private releaseAt(): number {
    return Math.max(this.heldUntil, this.globalHeldUntil());
  }

  private flush(): void {
    if (this.releaseAt() > Date.now()) {
      this.schedule();
      return;
    }
    for (const chunk of this.queue.splice(0)) {
      this.stats.delivered++;
      this.to.write(chunk);
    }
    if (this.ending) this.to.end();
  }
}

interface Connection {
  readonly client: Socket;
  readonly upstream: Socket;
  readonly requests: Link;
  readonly answers: Link;
}

export async function startDelayProxy(options: DelayProxyOptions): Promise<DelayProxy> {
  const host = options.upstreamHost ?? "127.0.0.1";
  const open = new Set<Connection>();
  // Bursts without `pick`: they also hold connections opened while they last.
  const all = { requests: 0, answers: 0 };
  const stats: DelayStats = { held: 0, delivered: 0, dropped: 0, orphaned: 0 };

  const server: Server = createServer((client) => {
    const upstream = tcpConnect({ host, port: options.upstreamPort });
    const conn: Connection = {
      client,
      upstream,
      requests: new Link(upstream, () => all.requests, stats),
      answers: new Link(client, () => all.answers, stats),
    };
    open.add(conn);
    client.on("data", (chunk: Buffer) => conn.requests.push(chunk));
    upstream.on("data", (chunk: Buffer) => conn.answers.push(chunk));
    // The client gave up (or is done): nothing it left held may reach the server.
    let clientClosed = false;
    const clientGone = (): void => {
      if (clientClosed) return;
      clientClosed = true;
      conn.requests.drop();
      conn.answers.drop();
      upstream.destroy();
      client.destroy();
      open.delete(conn);
    };
    // The server is done: what it already said still reaches the client, in order, then FIN.
    let upstreamClosed = false;
    const upstreamGone = (): void => {
      if (clientClosed || upstreamClosed) return;
      upstreamClosed = true;
      conn.requests.drop("orphaned");
      upstream.destroy();
      conn.answers.endAfterFlush();
      open.delete(conn);
    };
    client.on("end", clientGone);
    client.on("close", clientGone);
    client.on("error", clientGone);
    upstream.on("end", upstreamGone);
    upstream.on("close", upstreamGone);
    upstream.on("error", upstreamGone);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address !== "object") throw new Error("delay proxy has no port");

  return {
    port: address.port,
    endpoint: `http://127.0.0.1:${address.port}`,
    connections: () => open.size,
    stats: () => ({ ...stats }),
    hold(durationMs, holdOptions = {}) {
      const until = Date.now() + Math.max(0, durationMs);
      const both = (holdOptions.direction ?? "both") === "both";
      const pick = holdOptions.pick;
      if (pick === undefined) {
        all.requests = Math.max(all.requests, until);
        if (both) all.answers = Math.max(all.answers, until);
      }
      let held = 0;
      for (const conn of open) {
        if (pick !== undefined && !pick()) continue;
        held++;
        conn.requests.heldUntil = Math.max(conn.requests.heldUntil, until);
        if (both) conn.answers.heldUntil = Math.max(conn.answers.heldUntil, until);
      }
      return held;
    },
    async stop() {
      for (const conn of open) {
        conn.requests.drop();
        conn.answers.drop();
        conn.client.destroy();
        conn.upstream.destroy();
      }
      open.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
