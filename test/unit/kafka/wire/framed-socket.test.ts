/**
 * FrameAssembler: a byte stream cut anywhere comes out as the frames that went in, each in a
 * buffer of its own that later reads cannot change; a size no Kafka answer has stops it. And the
 * factory end to end: a plaintext socket to a local server that answers in dribbles and bursts.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { once } from "node:events";
import net from "node:net";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import {
  FrameAssembler,
  framedSocketFactory,
  MAX_FRAME_BYTES,
} from "../../../../lib/kafka/wire/framed-socket.js";

const FRAMED_SOCKET = fileURLToPath(new URL("../../../../lib/kafka/wire/framed-socket.ts", import.meta.url));

function frameOf(payload: Buffer): Buffer {
  const frame = Buffer.allocUnsafe(4 + payload.length);
  frame.writeInt32BE(payload.length, 0);
  payload.copy(frame, 4);
  return frame;
}

function collect(directReadMin?: number): {
  assembler: FrameAssembler;
  frames: Buffer[];
  refused: number[];
} {
  const frames: Buffer[] = [];
  const refused: number[] = [];
  return {
    assembler: new FrameAssembler(
      (frame) => frames.push(frame),
      (size) => refused.push(size),
      directReadMin,
    ),
    frames,
    refused,
  };
}

describe("FrameAssembler", () => {
  it("delivers every frame whole, however the stream is cut, and a reused read buffer changes none", () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 8 }),
        fc.array(fc.integer({ min: 1, max: 97 }), { minLength: 1, maxLength: 20 }),
        (payloads, cuts) => {
          // Prepare
          const frames = payloads.map((p) => frameOf(Buffer.from(p)));
          const stream = Buffer.concat(frames);
          const { assembler, frames: delivered, refused } = collect();
          const reused = Buffer.alloc(128);

          // Act: the stream through one reused buffer, in reads of the drawn sizes.
          let at = 0;
          for (let i = 0; at < stream.length; i++) {
            const n = Math.min(cuts[i % cuts.length] as number, stream.length - at);
            stream.copy(reused, 0, at, at + n);
            assembler.push(reused, n);
            reused.fill(0xee);
            at += n;
          }

          // Assess
          assert.deepEqual(refused, []);
          assert.deepEqual(delivered, frames);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("reads the rest of a large frame straight into it, and delivers every frame whole", () => {
    fc.assert(
      fc.property(
        // size "max": fast-check draws short arrays otherwise, and a frame must outgrow a read.
        fc.array(fc.uint8Array({ maxLength: 300, size: "max" }), { maxLength: 8 }),
        fc.array(fc.integer({ min: 1, max: 97 }), { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 1, max: 200 }),
        (payloads, cuts, directReadMin) => {
          // Prepare
          const frames = payloads.map((p) => frameOf(Buffer.from(p)));
          const stream = Buffer.concat(frames);
          const { assembler, frames: delivered, refused } = collect(directReadMin);
          const shared = Buffer.alloc(128);

          // Act: each read goes where readTarget says, at most as much as fits there, as a socket's.
          let at = 0;
          let direct = 0;
          for (let i = 0; at < stream.length; i++) {
            const target = assembler.readTarget(shared);
            const n = Math.min(cuts[i % cuts.length] as number, stream.length - at, target.length);
            if (n === 0) assert.fail(`readTarget gave no room at byte ${at} of ${stream.length}`);
            stream.copy(target, 0, at, at + n);
            assembler.received(target, n);
            if (target !== shared) direct++;
            shared.fill(0xee);
            at += n;
          }

          // Assess: whole frames, and a direct read once a frame still missed directReadMin bytes
          // after the read that began it (at most 97).
          assert.deepEqual(refused, []);
          assert.deepEqual(delivered, frames);
          if (frames.some((f) => f.length >= directReadMin + 97)) {
            assert.ok(direct > 0, "a frame far larger than a read was never read into directly");
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("refuses a negative size and one above MAX_FRAME_BYTES once, and delivers nothing after", () => {
    for (const size of [-1, MAX_FRAME_BYTES + 1, 0x16030100]) {
      // Prepare: a good frame, then the bad size and more bytes.
      const { assembler, frames, refused } = collect();
      const bad = Buffer.alloc(4);
      bad.writeInt32BE(size, 0);

      // Act
      assembler.push(Buffer.concat([frameOf(Buffer.from("ok")), bad, frameOf(Buffer.from("later"))]));
      assembler.push(frameOf(Buffer.from("more")));

      // Assess
      assert.deepEqual(frames, [frameOf(Buffer.from("ok"))]);
      assert.deepEqual(refused, [size]);
    }
  });

  it("delivers an empty frame (size 0)", () => {
    const { assembler, frames } = collect();
    assembler.push(frameOf(Buffer.alloc(0)));
    assert.deepEqual(frames, [frameOf(Buffer.alloc(0))]);
  });
});

describe("framedSocketFactory", () => {
  it("emits one data event per frame from a server that writes in dribbles and bursts", async () => {
    // Prepare: a server sending a large frame in small writes, then three frames in one write.
    const big = frameOf(Buffer.alloc(700_000, 7));
    const small = [1, 2, 3].map((n) => frameOf(Buffer.alloc(n * 10, n)));
    const server = net.createServer(async (client) => {
      for (let at = 0; at < big.length; at += 50_000) {
        client.write(big.subarray(at, at + 50_000));
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      client.end(Buffer.concat(small));
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as net.AddressInfo;
    const unusedTls = () => assert.fail("a plaintext socket must not use the TLS factory");

    const readTarget = FrameAssembler.prototype.readTarget;
    let direct = 0;
    FrameAssembler.prototype.readTarget = function (this: FrameAssembler, shared: Uint8Array) {
      const target = readTarget.call(this, shared);
      if (target !== shared) direct++;
      return target;
    };

    try {
      // Act
      const factory = framedSocketFactory(unusedTls);
      const socket = factory({ host: "127.0.0.1", port, onConnect: () => undefined });
      const received: Buffer[] = [];
      socket.on("data", (frame: Buffer) => received.push(frame));
      await once(socket, "end");

      // Assess: and most of the large frame was read straight into it.
      assert.deepEqual(received, [big, ...small]);
      assert.ok(direct > 0, "no read went straight into the large frame");
      socket.destroy();
    } finally {
      FrameAssembler.prototype.readTarget = readTarget;
      server.close();
    }
  });

  it("reads no more once a 'data' listener throws, so the frame it was given stays as delivered", () => {
    // Prepare: in a child process, as the throw is uncaught: a frame whose rest is read directly,
    // a listener that throws on it, then a second frame the socket could read into the first.
    const script = `
      import net from "node:net";
      import { framedSocketFactory } from ${JSON.stringify(FRAMED_SOCKET)};
      const frame = (size, fill) => { const f = Buffer.alloc(4 + size, fill); f.writeInt32BE(size); return f; };
      const [a, b] = [frame(300000, 0xaa), frame(300000, 0xbb)];
      const server = net.createServer(async (client) => {
        client.write(a.subarray(0, 1000));
        await new Promise((resolve) => setTimeout(resolve, 20));
        client.write(a.subarray(1000));
        await new Promise((resolve) => setTimeout(resolve, 50));
        client.end(b);
      }).listen(0, "127.0.0.1", () => {
        const socket = framedSocketFactory(() => { throw new Error("no TLS"); })(
          { host: "127.0.0.1", port: server.address().port, onConnect: () => {} });
        const got = [];
        process.on("uncaughtException", () => {});
        socket.on("data", (f) => { got.push(f); if (got.length === 1) throw new Error("listener threw"); });
        socket.on("close", () => {
          console.log(JSON.stringify({ frames: got.length, intact: got[0].equals(a), destroyed: socket.destroyed }));
          server.close();
        });
      });`;

    // Act
    const result = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      encoding: "utf8",
      timeout: 30_000,
    });

    // Assess
    assert.equal(result.status, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout.trim()), { frames: 1, intact: true, destroyed: true });
  });

  it("ends the socket with an error naming the size when the answer is not Kafka's", async () => {
    // Prepare: a server that answers like a TLS listener (a handshake record header).
    const server = net.createServer((client) =>
      client.end(Buffer.from([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x46])),
    );
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as net.AddressInfo;

    try {
      // Act
      const socket = framedSocketFactory(() => assert.fail("no TLS"))({
        host: "127.0.0.1",
        port,
        onConnect: () => undefined,
      });
      const [error] = (await once(socket, "error")) as [Error];

      // Assess
      assert.match(error.message, /answered a frame of 352518912 bytes/);
    } finally {
      server.close();
    }
  });
});
