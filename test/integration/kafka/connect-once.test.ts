// Regression: chaos workers on real Kafka finished their run and never exited. Each held one
// socket to a target broker that had been restarted, open, idle and owned by nobody: kafkajs
// 2.2.4's Connection.connect() opens a new socket whenever it is called while not yet connected,
// and its ConnectionPool calls it from every request that finds the connection down, so N
// requests to a broker that just came back opened N sockets; the connection kept the last, the
// others stayed open for the life of the process (disconnect() ends only the one it kept).
// lib/kafka/kafkajs-internals.ts makes concurrent connects of one connection share one socket.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { createServer, type Server, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { kafkajsLogger } from "../../../lib/kafka/wire/kafkajs-internals.js";

const require = createRequire(import.meta.url);
const Connection = require("kafkajs/src/network/connection.js") as new (
  options: object,
) => { connect(): Promise<boolean>; disconnect(): Promise<boolean> };
const socketFactory = (require("kafkajs/src/network/socketFactory.js") as () => unknown)();

describe("a kafkajs connection (as kafka-mirror loads kafkajs)", () => {
  let server: Server;
  let port: number;
  const accepted: Socket[] = [];

  before(async () => {
    // A listener that accepts and never answers: connect() needs no Kafka request.
    server = createServer((socket) => accepted.push(socket));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    port = typeof address === "object" && address !== null ? address.port : 0;
  });

  after(async () => {
    for (const socket of accepted) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  it("opens one socket for connects that overlap, and closes it on disconnect", async () => {
    const connection = new Connection({
      host: "127.0.0.1",
      port,
      logger: kafkajsLogger(undefined),
      socketFactory,
      requestTimeout: 5_000,
      connectionTimeout: 5_000,
    });

    await Promise.all(Array.from({ length: 5 }, () => connection.connect()));
    await delay(100);
    const opened = accepted.length;
    await connection.disconnect();
    await delay(100);
    const stillOpen = accepted.filter((s) => !s.readableEnded).length;

    assert.deepEqual({ opened, stillOpen }, { opened: 1, stillOpen: 0 });
  });
});
