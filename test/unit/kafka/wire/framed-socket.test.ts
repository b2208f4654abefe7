/**
 * FrameAssembler: a byte stream cut anywhere comes out as the frames that went in, each in a
 * buffer of its own that later reads cannot change; a size no Kafka answer has stops it. And the
 * factory end to end: a plaintext socket to a local server that answers in dribbles and bursts.
 */
import assert from "node:assert/strict";
import { once } from "node:events";
import net from "node:net";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  FrameAssembler,
  framedSocketFactory,
  MAX_FRAME_BYTES,
} from "../../../../lib/kafka/wire/framed-socket.js";

function frameOf(payload: Buffer): Buffer {
  const frame = Buffer.allocUnsafe(4 + payload.length);
  frame.writeInt32BE(payload.length, 0);
  payload.copy(frame, 4);
  return frame;
}

function collect(): { assembler: FrameAssembler; frames: Buffer[]; refused: number[] } {
  const frames: Buffer[] = [];
  const refused: number[] = [];
  return {
    assembler: new FrameAssembler(
      (frame) => frames.push(frame),
      (size) => refused.push(size),
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

    try {
      // Act
      const factory = framedSocketFactory(unusedTls);
      const socket = factory({ host: "127.0.0.1", port, onConnect: () => undefined });
      const received: Buffer[] = [];
      socket.on("data", (frame: Buffer) => received.push(frame));
      await once(socket, "end");

      // Assess
      assert.deepEqual(received, [big, ...small]);
      socket.destroy();
    } finally {
      server.close();
    }
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
