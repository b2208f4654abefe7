/**
 * Regression: a DynamoDB call to an endpoint that accepts the connection and never answers hung
 * for minutes (the SDK's requestTimeout only logged a warning), so a lease renewal could outlive
 * its lease. createDynamoDbClient's calls fail within their attempts' timeouts instead.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { createServer, type Server, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { LEASE_STORE_MAX_ATTEMPTS } from "../../../lib/config/schema.js";
import { createDynamoDbClient } from "../../../lib/dynamodb/client.js";
import { DynamoDbLeaseStore } from "../../../lib/dynamodb/lease-store.js";
import { isReplicatorError } from "../../../lib/errors.js";

const REQUEST_TIMEOUT_MS = 400;
/** The SDK's backoff between its attempts (at most 100 ms × 2^n, jittered) plus a loaded machine. */
const SLACK_MS = 1_500;

describe("DynamoDB client timeouts", () => {
  let server: Server;
  let endpoint: string;
  const sockets = new Set<Socket>();
  let connections = 0;

  before(async () => {
    // Accepts, reads, never answers: a half-dead endpoint or a black-holed NAT path.
    server = createServer((socket) => {
      connections++;
      sockets.add(socket);
      socket.on("data", () => {});
      socket.on("close", () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    assert.ok(address !== null && typeof address === "object");
    endpoint = `http://127.0.0.1:${address.port}`;
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("a call to a server that never answers fails with LEASE_STORE_UNAVAILABLE within its attempts' timeouts", {
    timeout: 20_000,
  }, async () => {
    // Prepare
    const client = createDynamoDbClient({
      endpoint,
      region: "us-east-1",
      credentials: { accessKeyId: "local", secretAccessKey: "local" },
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
    });
    const store = new DynamoDbLeaseStore({ client, tableName: `leases-${randomUUID()}` });
    const before = connections;
    const started = performance.now();

    // Act + Assess
    try {
      await assert.rejects(store.list(), (error: unknown) => {
        assert.ok(isReplicatorError(error, "LEASE_STORE_UNAVAILABLE"), String(error));
        assert.equal(error.retryable, true);
        assert.equal(error.details.timedOut, true);
        assert.match(error.message, /did not answer Scan within the request timeout/);
        return true;
      });
      const elapsed = performance.now() - started;
      assert.ok(
        elapsed >= REQUEST_TIMEOUT_MS * LEASE_STORE_MAX_ATTEMPTS - 50,
        `every attempt waited its timeout (${elapsed.toFixed(0)} ms)`,
      );
      assert.ok(
        elapsed < REQUEST_TIMEOUT_MS * LEASE_STORE_MAX_ATTEMPTS + SLACK_MS,
        `failed within ${LEASE_STORE_MAX_ATTEMPTS} x ${REQUEST_TIMEOUT_MS} ms + slack, took ${elapsed.toFixed(0)} ms`,
      );
      // Bounded SDK retries: one connection per attempt, no more.
      assert.equal(connections - before, LEASE_STORE_MAX_ATTEMPTS);
    } finally {
      client.destroy();
    }
  });
});
