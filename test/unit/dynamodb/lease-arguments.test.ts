/**
 * DynamoDbLeaseStore refuses bad arguments before it writes anything, as CONFIG_INVALID naming
 * the operation, the argument and the value. The client points at a closed port: a check that
 * let a bad value through would reach the network and fail differently (LEASE_STORE_UNAVAILABLE).
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import type { Lease } from "../../../lib/core/ports.js";
import { createDynamoDbClient } from "../../../lib/dynamodb/client.js";
import { DynamoDbLeaseStore } from "../../../lib/dynamodb/lease-store.js";
import { isReplicatorError } from "../../../lib/errors.js";
import { leaseOf } from "../../helpers/fake-leases.js";

const TP = { topic: "orders", partition: 0 };
const HELD: Lease = leaseOf(TP, { owner: "a", counter: 2, expiresAt: 2_000, checkpoint: 10 });
const SOURCE = { topicId: "id-1", leaderEpoch: 3 };

function configInvalid(operation: string, argument: string, value: unknown) {
  return (error: unknown): boolean => {
    assert.ok(isReplicatorError(error, "CONFIG_INVALID"), `expected CONFIG_INVALID, got ${String(error)}`);
    assert.deepEqual(error.details, { operation, argument, value });
    assert.match(error.message, new RegExp(`^${operation}: ${argument.replace(".", "\\.")} must be`));
    return true;
  };
}

describe("DynamoDbLeaseStore argument checks", () => {
  const client = createDynamoDbClient({
    endpoint: "http://127.0.0.1:9",
    region: "local",
    credentials: { accessKeyId: "x", secretAccessKey: "x" },
    requestTimeoutMs: 200,
    maxAttempts: 1,
  });
  after(() => client.destroy());
  const store = new DynamoDbLeaseStore({ client, tableName: "never-reached" });

  it("claim: an empty owner and an expiry that is not an epoch ms", async () => {
    await assert.rejects(store.claim(leaseOf(TP), "", 1_000), configInvalid("claim", "owner", ""));
    await assert.rejects(store.claim(leaseOf(TP), "a", -1), configInvalid("claim", "expiresAt", -1));
    await assert.rejects(store.claim(leaseOf(TP), "a", 1.5), configInvalid("claim", "expiresAt", 1.5));
  });

  it("renew and handOver: an expiry that is not an epoch ms", async () => {
    await assert.rejects(store.renew(HELD, Number.NaN), configInvalid("renew", "expiresAt", Number.NaN));
    const asked = { ...HELD, handoffTo: "b" };
    await assert.rejects(store.handOver(asked, 2 ** 53), configInvalid("handOver", "expiresAt", 2 ** 53));
  });

  it("checkpoint: offsets, the caller's clock and the source position", async () => {
    await assert.rejects(store.checkpoint(HELD, -1, 1_000), configInvalid("checkpoint", "nextOffset", -1));
    await assert.rejects(
      store.checkpoint(HELD, 11, 1_000, 0.5),
      configInvalid("checkpoint", "targetOffset", 0.5),
    );
    await assert.rejects(store.checkpoint(HELD, 11, -5), configInvalid("checkpoint", "now", -5));
    await assert.rejects(
      store.checkpoint(HELD, 11, 1_000, 7, { topicId: "", leaderEpoch: 1 }),
      configInvalid("checkpoint", "source.topicId", ""),
    );
    await assert.rejects(
      store.checkpoint(HELD, 11, 1_000, 7, { topicId: "id", leaderEpoch: -2 }),
      configInvalid("checkpoint", "source.leaderEpoch", -2),
    );
  });

  it("resetCheckpoint: offsets, a lease without a checkpoint, the source position", async () => {
    const position = { targetOffset: 4, source: SOURCE };
    await assert.rejects(
      store.resetCheckpoint(HELD, -1, 1_000, "log-truncated", position),
      configInvalid("resetCheckpoint", "nextOffset", -1),
    );
    await assert.rejects(
      store.resetCheckpoint({ ...HELD, checkpoint: null }, 0, 1_000, "topic-recreated", position),
      configInvalid("resetCheckpoint", "held.checkpoint", null),
    );
    await assert.rejects(
      store.resetCheckpoint(HELD, 0, 1_000, "log-truncated", { targetOffset: -3, source: SOURCE }),
      configInvalid("resetCheckpoint", "targetOffset", -3),
    );
    await assert.rejects(
      store.resetCheckpoint(HELD, 0, 1_000, "log-truncated", {
        targetOffset: null,
        source: { topicId: "", leaderEpoch: null },
      }),
      configInvalid("resetCheckpoint", "source.topicId", ""),
    );
  });

  it("requestHandoff: an empty requester, or the owner itself", async () => {
    await assert.rejects(store.requestHandoff(HELD, ""), configInvalid("requestHandoff", "requester", ""));
    await assert.rejects(store.requestHandoff(HELD, "a"), configInvalid("requestHandoff", "requester", "a"));
  });
});
