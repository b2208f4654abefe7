/**
 * The socket factory kafkajs connects through (its public `socketFactory` option). A plaintext
 * socket reads with node's `onread` and hands kafkajs whole response frames, each in a buffer of
 * exactly its size: the rest of a large frame is read straight into that buffer, everything else
 * into one reusable buffer and copied out. Node's stream way gave every read a new 64 KiB buffer
 * and kafkajs concatenated a response from them: for a 1 MiB fetch, two megabytes of fresh memory
 * and a copy (with the next two changes in kafkajs-internals.ts and pass-through.ts, bench --copy
 * batches went from 6.9 to 5.45 CPU-s/GiB).
 *
 * TLS sockets are made by kafkajs's own factory, as before: `onread` is a net.Socket option, and
 * what a TLS socket reads is decrypted into new buffers anyway.
 */
import net from "node:net";
import { answerPool } from "./answer-pool.js";

/** kafkajs 2.2.4's ISocketFactory. */
export type SocketFactory = (options: {
  host: string;
  port: number;
  ssl?: unknown;
  onConnect: () => void;
}) => net.Socket;

/** As kafkajs's factory. */
const KEEP_ALIVE_DELAY_MS = 60_000;

/**
 * The largest response frame accepted: far above any answer to a request of ours (a fetch is
 * bounded by batch.maxBytes, at most 100 MiB, plus one batch). Anything larger is not a Kafka
 * answer: a TLS listener's bytes read as a size are 350 MB and more.
 */
export const MAX_FRAME_BYTES = 256 * 1024 * 1024;

/** One read buffer for every socket: a read's bytes are copied out before the callback returns. */
const READ_BUFFER = Buffer.allocUnsafe(256 * 1024);

/** @param tls kafkajs's own factory, for sockets with `ssl`. */
export function framedSocketFactory(tls: SocketFactory): SocketFactory {
  return (options) => {
    if (options.ssl) return tls(options);
    // Made before the socket: node asks for the first read buffer while connecting.
    const frames = new FrameAssembler(
      (frame) => socket.emit("data", frame),
      (size) =>
        socket.destroy(
          new Error(
            `${options.host}:${options.port} answered a frame of ${size} bytes, outside 0..${MAX_FRAME_BYTES}: ` +
              "not a Kafka broker's answer (a TLS listener reached in plaintext? set source/target security)",
          ),
        ),
    );
    const socket = net.connect(
      {
        host: options.host,
        port: options.port,
        onread: {
          // Node calls it for the first read and after each callback: the next read goes there.
          buffer: () => frames.readTarget(READ_BUFFER),
          callback: (bytes: number, buffer: Uint8Array) => {
            try {
              frames.received(buffer, bytes);
            } catch (error) {
              // A 'data' listener threw: node then skips asking for the next buffer, and the next
              // read would go into the view of the frame just delivered. No more reads; the error
              // goes on as it would have.
              socket.destroy();
              throw error;
            }
            return true;
          },
        },
      },
      options.onConnect,
    );
    socket.setKeepAlive(true, KEEP_ALIVE_DELAY_MS);
    return socket;
  };
}

/**
 * The least a frame must still miss to be read into directly: below it, one read of the shared
 * buffer may bring the frame's end and the next answers too, for the price of a small copy.
 */
export const DIRECT_READ_MIN = 64 * 1024;

/**
 * Cuts a byte stream into Kafka frames (int32 size, then that many bytes), each delivered in a
 * buffer of its own, size included, as kafkajs's Connection expects them.
 */
export class FrameAssembler {
  readonly #deliver: (frame: Buffer) => void;
  readonly #refuse: (size: number) => void;
  readonly #directReadMin: number;
  readonly #size = Buffer.alloc(4);
  #sizeFilled = 0;
  #frame: Buffer | null = null;
  #filled = 0;
  #refused = false;
  /** The view of #frame readTarget gave last, so received() knows a direct read from a shared one. */
  #direct: Uint8Array | null = null;

  constructor(
    deliver: (frame: Buffer) => void,
    refuse: (size: number) => void,
    directReadMin = DIRECT_READ_MIN,
  ) {
    this.#deliver = deliver;
    this.#refuse = refuse;
    this.#directReadMin = directReadMin;
  }

  /**
   * Where the next read should go: the missing part of the frame being filled when it is large,
   * so a fetched megabyte lands in its frame without a copy (and a read cannot run past the
   * frame's end), else `shared`, whose bytes push() copies out.
   */
  readTarget(shared: Uint8Array): Uint8Array {
    const frame = this.#frame;
    // A refused stream has no frame: push() refuses a size before it allocates one.
    if (frame === null || frame.length - this.#filled < this.#directReadMin) {
      this.#direct = null;
      return shared;
    }
    this.#direct = frame.subarray(this.#filled);
    return this.#direct;
  }

  /** The socket read `bytes` bytes into `buffer`, which readTarget gave. */
  received(buffer: Uint8Array, bytes: number): void {
    if (buffer !== this.#direct) {
      this.push(buffer, bytes);
      return;
    }
    this.#direct = null;
    const frame = this.#frame as Buffer;
    this.#filled += bytes;
    if (this.#filled === frame.length) {
      this.#frame = null;
      this.#deliver(frame);
    }
  }

  /** The first `length` bytes of `chunk`, which may be reused once this returns. */
  push(chunk: Uint8Array, length = chunk.length): void {
    let at = 0;
    while (at < length && !this.#refused) {
      if (this.#frame === null) {
        const n = Math.min(4 - this.#sizeFilled, length - at);
        this.#size.set(chunk.subarray(at, at + n), this.#sizeFilled);
        this.#sizeFilled += n;
        at += n;
        if (this.#sizeFilled < 4) return;
        this.#sizeFilled = 0;
        const size = this.#size.readInt32BE(0);
        if (size < 0 || size > MAX_FRAME_BYTES) {
          this.#refused = true;
          this.#refuse(size);
          return;
        }
        // A large answer's buffer may be one a written fetch gave back (answer-pool.ts).
        this.#frame = answerPool.take(4 + size);
        this.#frame.set(this.#size, 0);
        this.#filled = 4;
      }
      const frame = this.#frame;
      const n = Math.min(frame.length - this.#filled, length - at);
      frame.set(chunk.subarray(at, at + n), this.#filled);
      this.#filled += n;
      at += n;
      if (this.#filled === frame.length) {
        this.#frame = null;
        this.#deliver(frame);
      }
    }
  }
}
