/**
 * A Kafka listener that speaks just enough of the protocol to refuse a SASL login: ApiVersions
 * (advertising SaslHandshake and SaslAuthenticate), SaslHandshake (PLAIN and SCRAM enabled), and
 * SaslAuthenticate answered with SASL_AUTHENTICATION_FAILED (58), whatever the credentials.
 * Not a SASL server: it only shows how the client reports a refusal.
 */
import { createServer, type Server, type Socket } from "node:net";

const API_VERSIONS = 18;
const SASL_HANDSHAKE = 17;
const SASL_AUTHENTICATE = 36;
const SASL_AUTHENTICATION_FAILED = 58;
const MECHANISMS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"];

export interface SaslRefusingBroker {
  readonly address: string;
  /** Authentication attempts refused so far. */
  readonly refusals: number;
  close(): Promise<void>;
}

export async function startSaslRefusingBroker(): Promise<SaslRefusingBroker> {
  let refusals = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
    let buffered = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 4 && buffered.length >= 4 + buffered.readInt32BE(0)) {
        const frame = buffered.subarray(4, 4 + buffered.readInt32BE(0));
        buffered = buffered.subarray(4 + frame.length);
        const apiKey = frame.readInt16BE(0);
        const version = frame.readInt16BE(2);
        const body = answer(apiKey, version);
        if (apiKey === SASL_AUTHENTICATE) refusals++;
        if (body === undefined) {
          socket.destroy();
          return;
        }
        const header = Buffer.alloc(8);
        header.writeInt32BE(4 + body.length, 0);
        header.writeInt32BE(frame.readInt32BE(4), 4); // correlation id
        socket.write(Buffer.concat([header, body]));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    address: `127.0.0.1:${port}`,
    get refusals() {
      return refusals;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function answer(apiKey: number, version: number): Buffer | undefined {
  switch (apiKey) {
    case API_VERSIONS: {
      const apis = [
        [API_VERSIONS, 0, 2],
        [SASL_HANDSHAKE, 0, 1],
        [SASL_AUTHENTICATE, 0, 0],
        [3, 0, 1], // Metadata, never reached
      ];
      const parts = [int16(0), int32(apis.length), ...apis.flatMap((api) => api.map(int16))];
      return Buffer.concat(version >= 1 ? [...parts, int32(0)] : parts);
    }
    case SASL_HANDSHAKE:
      return Buffer.concat([int16(0), int32(MECHANISMS.length), ...MECHANISMS.map(string)]);
    case SASL_AUTHENTICATE:
      return Buffer.concat([int16(SASL_AUTHENTICATION_FAILED), string("Authentication failed"), int32(-1)]);
    default:
      return undefined;
  }
}

function int16(value: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeInt16BE(value);
  return b;
}

function int32(value: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32BE(value);
  return b;
}

function string(value: string): Buffer {
  return Buffer.concat([int16(Buffer.byteLength(value)), Buffer.from(value)]);
}
