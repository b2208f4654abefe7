/**
 * The chaos run's latency bursts (test/helpers/delay-proxy.ts) over real loopback sockets: held
 * bytes arrive late, whole and in order; a client that gives up leaves nothing behind it; a server
 * that closes still gets its last answer to the client.
 */
import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";
import { after, before, describe, it } from "node:test";
import { type DelayProxy, startDelayProxy } from "../../helpers/delay-proxy.js";

/** What the server side saw of one connection. */
interface Seen {
  readonly socket: Socket;
  bytes: Buffer;
  firstAt: number;
  closed: Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await sleep(10);
  }
}

async function dial(port: number): Promise<{ socket: Socket; received: () => Buffer; ended: Promise<void> }> {
  const socket = tcpConnect({ host: "127.0.0.1", port });
  await once(socket, "connect");
  let received = Buffer.alloc(0);
  socket.on("data", (chunk: Buffer) => {
    received = Buffer.concat([received, chunk]);
  });
  const ended = new Promise<void>((resolve) => socket.once("end", () => resolve()));
  socket.on("error", () => {});
  return { socket, received: () => received, ended };
}

describe("delay proxy", () => {
  let upstream: Server;
  let proxy: DelayProxy;
  const seen: Seen[] = [];

  before(async () => {
    upstream = createServer((socket) => {
      const entry: Seen = {
        socket,
        bytes: Buffer.alloc(0),
        firstAt: 0,
        closed: new Promise((resolve) => socket.once("close", () => resolve())),
      };
      seen.push(entry);
      socket.on("data", (chunk: Buffer) => {
        if (entry.bytes.length === 0) entry.firstAt = Date.now();
        entry.bytes = Buffer.concat([entry.bytes, chunk]);
      });
      socket.on("error", () => {});
    });
    upstream.listen(0, "127.0.0.1");
    await once(upstream, "listening");
    const address = upstream.address();
    assert.ok(address !== null && typeof address === "object");
    proxy = await startDelayProxy({ upstreamPort: address.port });
  });

  after(async () => {
    await proxy.stop();
    for (const s of seen) s.socket.destroy();
    await new Promise((resolve) => upstream.close(resolve));
  });

  const nextSeen = async (count: number): Promise<Seen> => {
    await until(() => seen.length >= count);
    const entry = seen[count - 1];
    assert.ok(entry !== undefined);
    return entry;
  };

  it("passes bytes straight through when nothing is held", async () => {
    const client = await dial(proxy.port);
    const server = await nextSeen(1);
    client.socket.write(Buffer.from([1, 2, 3]));
    await until(() => server.bytes.length === 3);
    server.socket.write(Buffer.from([9, 8]));
    await until(() => client.received().length === 2);
    assert.deepEqual([...client.received()], [9, 8]);
    client.socket.destroy();
  });

  it("holds both directions of a connection for the burst, then delivers every byte in order", async () => {
    const client = await dial(proxy.port);
    const server = await nextSeen(2);
    await until(() => proxy.connections() >= 1);
    const start = Date.now();
    assert.ok(proxy.hold(600) >= 1);
    for (let i = 0; i < 20; i++) client.socket.write(Buffer.from([i]));
    server.socket.write(Buffer.from([0xaa, 0xbb]));
    await sleep(300);
    assert.equal(server.bytes.length, 0, "request bytes arrived during the burst");
    assert.equal(client.received().length, 0, "answer bytes arrived during the burst");
    await until(() => server.bytes.length === 20 && client.received().length === 2);
    assert.ok(server.firstAt - start >= 550, `held only ${server.firstAt - start} ms`);
    assert.deepEqual(
      [...server.bytes],
      Array.from({ length: 20 }, (_, i) => i),
    );
    assert.deepEqual([...client.received()], [0xaa, 0xbb]);
    client.socket.destroy();
  });

  it("holds new requests on connections opened during a burst, and answers still flow", async () => {
    proxy.hold(500, { direction: "requests" });
    const client = await dial(proxy.port);
    const server = await nextSeen(3);
    client.socket.write(Buffer.from("abc"));
    server.socket.write(Buffer.from("x"));
    await until(() => client.received().length === 1, 300);
    assert.equal(server.bytes.length, 0, "a request arrived during the burst");
    await until(() => server.bytes.length === 3);
    assert.equal(server.bytes.toString("latin1"), "abc");
    client.socket.destroy();
  });

  it("holds only the picked connections", async () => {
    const held = await dial(proxy.port);
    const heldServer = await nextSeen(4);
    const free = await dial(proxy.port);
    const freeServer = await nextSeen(5);
    await until(() => proxy.connections() >= 2);
    let first = true;
    // Connections are asked in the order they opened: the first one is held.
    proxy.hold(500, {
      pick: () => {
        const pick = first;
        first = false;
        return pick;
      },
    });
    held.socket.write(Buffer.from([1]));
    free.socket.write(Buffer.from([2]));
    await until(() => freeServer.bytes.length === 1, 300);
    assert.equal(heldServer.bytes.length, 0);
    await until(() => heldServer.bytes.length === 1);
    held.socket.destroy();
    free.socket.destroy();
  });

  it("drops held bytes and closes the server side when the client gives up", async () => {
    const client = await dial(proxy.port);
    const server = await nextSeen(6);
    await until(() => proxy.connections() >= 1);
    client.socket.write(Buffer.from([1, 2]));
    await until(() => server.bytes.length === 2);
    proxy.hold(400);
    // The second half of a request, then the client times out and goes away.
    client.socket.write(Buffer.from([3, 4]));
    await sleep(100);
    const droppedBefore = proxy.stats().dropped;
    client.socket.destroy();
    await server.closed;
    await sleep(500);
    assert.deepEqual([...server.bytes], [1, 2], "held bytes reached the server after the client left");
    assert.equal(proxy.stats().dropped, droppedBefore + 1);
  });

  it("delivers held answers, then closes the client, when the server closes", async () => {
    const client = await dial(proxy.port);
    const server = await nextSeen(7);
    await until(() => proxy.connections() >= 1);
    proxy.hold(400);
    server.socket.end(Buffer.from([5, 6, 7]));
    await sleep(200);
    assert.equal(client.received().length, 0);
    await client.ended;
    assert.deepEqual([...client.received()], [5, 6, 7]);
    client.socket.destroy();
  });

  it("closes the client when the server cannot be reached", async () => {
    const dead = createServer();
    dead.listen(0, "127.0.0.1");
    await once(dead, "listening");
    const address = dead.address();
    assert.ok(address !== null && typeof address === "object");
    await new Promise((resolve) => dead.close(resolve));
    const orphan = await startDelayProxy({ upstreamPort: address.port });
    try {
      const client = await dial(orphan.port);
      await client.ended;
      client.socket.destroy();
    } finally {
      await orphan.stop();
    }
  });
});
