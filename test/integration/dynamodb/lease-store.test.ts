import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  CreateTableCommand,
  type DynamoDBClient,
  PutItemCommand,
  ScanCommand,
  UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";
import type { Lease } from "../../../lib/core/ports.js";
import { DynamoDbLeaseStore } from "../../../lib/dynamodb/lease-store.js";
import { createLeaseTable, describeLeaseTable } from "../../../lib/dynamodb/lease-table.js";
import { type ErrorCode, isReplicatorError } from "../../../lib/errors.js";
import { type DynamoDbLocal, startDynamoDbLocal, useDynamoDbLocal } from "../../helpers/dynamodb-local.js";
import { CapturingLogger, CapturingMetrics, leaseOf } from "../../helpers/fakes.js";

const MINUTE = 60_000;

function assertCode(code: ErrorCode, reason?: string) {
  return (error: unknown): boolean => {
    assert.ok(isReplicatorError(error, code), `expected ${code}, got ${String(error)}`);
    if (reason !== undefined) assert.equal(error.details.reason, reason);
    return true;
  };
}

describe("DynamoDbLeaseStore against DynamoDB Local", () => {
  const db = useDynamoDbLocal();

  /** A fresh table per test, so tests share nothing but the emulator. */
  async function freshStore(): Promise<{ store: DynamoDbLeaseStore; tableName: string }> {
    const tableName = await db.freshLeaseTable();
    return { store: new DynamoDbLeaseStore({ client: db.client, tableName }), tableName };
  }

  async function ensureOne(store: DynamoDbLeaseStore, topic = "orders", partition = 0): Promise<Lease> {
    await store.ensure([{ topic, partition }]);
    const lease = (await store.list()).find((l) => l.topic === topic && l.partition === partition);
    assert.ok(lease, "ensure created the lease");
    return lease;
  }

  async function claimed(store: DynamoDbLeaseStore, observed: Lease, owner: string, expiresAt: number) {
    const lease = await store.claim(observed, owner, expiresAt);
    assert.ok(lease, `${owner} claimed ${observed.topic}:${observed.partition}`);
    return lease;
  }

  it("ensure creates free leases and list reads them back", async () => {
    const { store } = await freshStore();

    await store.ensure([
      { topic: "orders", partition: 0 },
      { topic: "orders", partition: 1 },
      { topic: "orders", partition: 1 },
    ]);
    const leases = await store.list();

    assert.deepEqual(
      leases.sort((a, b) => a.partition - b.partition),
      [0, 1].map((partition) => ({
        topic: "orders",
        partition,
        owner: null,
        counter: 0,
        expiresAt: 0,
        checkpoint: null,
        lastProgressAt: null,
        handoffTo: null,
        targetOffset: null,
        sourceTopicId: null,
        sourceEpoch: null,
      })),
    );
  });

  it("20 concurrent claims of one lease yield exactly one owner", async () => {
    const { store } = await freshStore();
    const free = await ensureOne(store);
    const expiresAt = Date.now() + MINUTE;

    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => store.claim(free, `worker-${i}`, expiresAt)),
    );

    const winners = results.filter((r): r is Lease => r !== null);
    assert.equal(winners.length, 1);
    const [stored] = await store.list();
    assert.equal(stored?.owner, winners[0]?.owner);
    assert.equal(stored?.counter, 1);
  });

  it("an expired lease is taken over and the old holder's renew and checkpoint are refused", async () => {
    const { store } = await freshStore();
    const free = await ensureOne(store);
    const now = Date.now();
    const heldByA = await claimed(store, free, "worker-a", now - 1);
    // Prepare: B sees A's lease expired and takes it.
    const [observed] = await store.list();
    assert.ok(observed && observed.expiresAt < Date.now());
    const heldByB = await claimed(store, observed, "worker-b", now + MINUTE);
    assert.equal(heldByB.counter, heldByA.counter + 1);

    await assert.rejects(store.renew(heldByA, now + MINUTE), assertCode("LEASE_LOST", "taken"));
    await assert.rejects(store.checkpoint(heldByA, 10, now), assertCode("LEASE_LOST", "taken"));

    const [stored] = await store.list();
    assert.equal(stored?.owner, "worker-b");
    assert.equal(stored?.expiresAt, now + MINUTE);
    assert.equal(stored?.checkpoint, null);
  });

  it("late renewal: a renewal that lands after another worker saw the lease expired makes its claim fail", async () => {
    // Prepare: A holds the lease; its expiry passes while its renewal is on the way.
    const { store } = await freshStore();
    const now = Date.now();
    const heldByA = await claimed(store, await ensureOne(store), "worker-a", now - 1);
    const [seenByB] = await store.list();
    assert.ok(
      seenByB && seenByB.owner === "worker-a" && seenByB.expiresAt <= Date.now(),
      "B sees it expired",
    );

    // Act: A's late renewal lands, then B's claim, decided on what B saw before it.
    const renewedByA = await store.renew(heldByA, now + MINUTE);
    const claimedByB = await store.claim(seenByB, "worker-b", now + MINUTE);

    // Assess: one holder. A, told its renewal landed, may go on writing; B must not start.
    assert.equal(claimedByB, null);
    const [stored] = await store.list();
    assert.equal(stored?.owner, "worker-a");
    assert.equal(stored?.counter, heldByA.counter);
    assert.equal(stored?.expiresAt, now + MINUTE);
    const checkpointed = await store.checkpoint(renewedByA, 10, Date.now());
    assert.equal(checkpointed.checkpoint, 10);
  });

  it("a stale holder's checkpoint is refused after its unexpired lease was stolen", async () => {
    const { store } = await freshStore();
    const free = await ensureOne(store);
    const now = Date.now();
    const heldByA = await claimed(store, free, "worker-a", now + MINUTE);
    const heldByB = await claimed(store, heldByA, "worker-b", now + MINUTE);
    await store.checkpoint(heldByB, 50, now);

    await assert.rejects(store.checkpoint(heldByA, 80, now), assertCode("LEASE_LOST", "taken"));

    const [stored] = await store.list();
    assert.equal(stored?.checkpoint, 50);
  });

  it("a lease that was lost and won back by the same worker id fences the old claim", async () => {
    const { store } = await freshStore();
    const free = await ensureOne(store);
    const now = Date.now();
    const first = await claimed(store, free, "worker-a", now + MINUTE);
    const stolen = await claimed(store, first, "worker-b", now + MINUTE);
    const wonBack = await claimed(store, stolen, "worker-a", now + MINUTE);

    await assert.rejects(store.checkpoint(first, 10, now), assertCode("LEASE_LOST", "taken"));
    await assert.rejects(store.renew(first, now + 2 * MINUTE), assertCode("LEASE_LOST", "taken"));
    assert.equal(await store.release(first), false);
    // A third worker that saw the first claim must not take the lease from its current holder.
    assert.equal(await store.claim(first, "worker-c", now + MINUTE), null);

    const [stored] = await store.list();
    assert.deepEqual(stored, wonBack);
  });

  it("a checkpoint after expiry is refused even when nobody took the lease", async () => {
    const { store } = await freshStore();
    const free = await ensureOne(store);
    const expiresAt = Date.now() + MINUTE;
    const held = await claimed(store, free, "worker-a", expiresAt);
    await store.checkpoint(held, 5, expiresAt - 1);

    await assert.rejects(store.checkpoint(held, 10, expiresAt), assertCode("LEASE_LOST", "expired"));

    const [stored] = await store.list();
    assert.equal(stored?.owner, "worker-a");
    assert.equal(stored?.checkpoint, 5);
  });

  it("renew extends a held lease, and checkpoints succeed until the new expiry", async () => {
    const { store } = await freshStore();
    const free = await ensureOne(store);
    const now = Date.now();
    const held = await claimed(store, free, "worker-a", now + 1_000);

    const renewed = await store.renew(held, now + MINUTE);
    const advanced = await store.checkpoint(renewed, 7, now + 2_000);

    assert.equal(renewed.expiresAt, now + MINUTE);
    assert.equal(renewed.counter, held.counter);
    assert.equal(advanced.checkpoint, 7);
  });

  it("release frees the lease, a claim right after succeeds, and a second release returns false", async () => {
    const { store } = await freshStore();
    const free = await ensureOne(store);
    const now = Date.now();
    const held = await claimed(store, free, "worker-a", now + MINUTE);
    await store.checkpoint(held, 30, now);

    assert.equal(await store.release(held), true);
    const [released] = await store.list();
    assert.ok(released);
    assert.equal(released.owner, null);
    assert.equal(released.expiresAt, 0);
    assert.equal(released.checkpoint, 30);
    const next = await claimed(store, released, "worker-b", now + MINUTE);

    assert.equal(next.counter, held.counter + 1);
    assert.equal(next.checkpoint, 30);
    assert.equal(await store.release(held), false);
    await assert.rejects(store.renew(held, now + MINUTE), assertCode("LEASE_LOST", "taken"));
  });

  it("a stale holder cannot release a lease another worker holds", async () => {
    const { store } = await freshStore();
    const free = await ensureOne(store);
    const now = Date.now();
    const heldByA = await claimed(store, free, "worker-a", now - 1);
    await claimed(store, heldByA, "worker-b", now + MINUTE);

    assert.equal(await store.release(heldByA), false);

    const [stored] = await store.list();
    assert.equal(stored?.owner, "worker-b");
  });

  it("a handoff request is seen by the holder, and handOver passes the lease to the asker", async () => {
    const { store } = await freshStore();
    const now = Date.now();
    const held = await claimed(store, await ensureOne(store), "worker-a", now + MINUTE);

    // Asking does not move the lease; a second asker cannot overwrite the first request.
    assert.equal(await store.requestHandoff(held, "worker-b"), true);
    assert.equal(await store.requestHandoff(held, "worker-c"), false);
    const renewed = await store.renew(held, now + 2 * MINUTE);
    assert.equal(renewed.owner, "worker-a");
    assert.equal(renewed.handoffTo, "worker-b");
    const checkpointed = await store.checkpoint(renewed, 42, Date.now());

    // Act
    assert.equal(await store.handOver(checkpointed, now + 3 * MINUTE), true);

    // Assess: B holds it with A's checkpoint and a fresh expiry; A is fenced by the new counter.
    const [after] = await store.list();
    assert.equal(after?.owner, "worker-b");
    assert.equal(after?.counter, held.counter + 1);
    assert.equal(after?.checkpoint, 42);
    assert.equal(after?.expiresAt, now + 3 * MINUTE);
    assert.equal(after?.handoffTo, null);
    await assert.rejects(store.checkpoint(checkpointed, 50, Date.now()), assertCode("LEASE_LOST"));
    assert.equal(await store.handOver(checkpointed, now + 3 * MINUTE), false);
  });

  it("a handoff request lands only on the holding it was made against", async () => {
    const { store } = await freshStore();
    const now = Date.now();
    const first = await claimed(store, await ensureOne(store), "worker-a", now + MINUTE);
    assert.equal(await store.release(first), true);
    const [free] = await store.list();
    assert.ok(free);
    await claimed(store, free, "worker-c", now + MINUTE);

    // B judged A overloaded from a stale view; C's holding must not be asked to give up.
    assert.equal(await store.requestHandoff(first, "worker-b"), false);
    const [current] = await store.list();
    assert.equal(current?.handoffTo, null);
  });

  it("a claim based on a stale view returns null and changes nothing", async () => {
    const { store } = await freshStore();
    const free = await ensureOne(store);
    const now = Date.now();
    await claimed(store, free, "worker-a", now + MINUTE);

    assert.equal(await store.claim(free, "worker-b", now + MINUTE), null);

    const [stored] = await store.list();
    assert.equal(stored?.owner, "worker-a");
    assert.equal(stored?.counter, 1);
  });

  it("a claim of a lease that does not exist returns null and does not create it", async () => {
    const { store } = await freshStore();
    const ghost = leaseOf({ topic: "ghost", partition: 3 });

    assert.equal(await store.claim(ghost, "worker-a", Date.now() + MINUTE), null);
    assert.deepEqual(await store.list(), []);
  });

  it("ensure is idempotent under concurrency and never resets a held lease or its checkpoint", async () => {
    const { store, tableName } = await freshStore();
    const free = await ensureOne(store, "orders", 0);
    const now = Date.now();
    const held = await claimed(store, free, "worker-a", now + MINUTE);
    const progressed = await store.checkpoint(held, 42, now);
    const partitions = Array.from({ length: 8 }, (_, partition) => ({ topic: "orders", partition }));

    // Many cold-starting workers run ensure with the same list at once.
    await Promise.all(
      Array.from({ length: 10 }, () =>
        new DynamoDbLeaseStore({ client: db.client, tableName }).ensure(partitions),
      ),
    );

    const leases = await store.list();
    assert.equal(leases.length, 8);
    const first = leases.find((l) => l.partition === 0);
    assert.deepEqual(first, progressed);
    assert.ok(leases.filter((l) => l.partition !== 0).every((l) => l.owner === null && l.counter === 0));
  });

  it("ensure does not reset a lease claimed between its existence check and its put", async () => {
    const { store, tableName } = await freshStore();
    const tp = { topic: "orders", partition: 0 };
    const now = Date.now();
    // Prepare: worker B's ensure is paused after its read found nothing; meanwhile worker A
    // creates, claims and checkpoints the lease. A hook in B's own client (a real client on the
    // real emulator) makes the interleaving deterministic.
    const clientB = db.ddb.client();
    let progressed: Lease | undefined;
    clientB.middlewareStack.add(
      (next, context) => async (args) => {
        const output = await next(args);
        if (context.commandName === "BatchGetItemCommand" && progressed === undefined) {
          const free = await ensureOne(store, tp.topic, tp.partition);
          progressed = await store.checkpoint(await claimed(store, free, "worker-a", now + MINUTE), 42, now);
        }
        return output;
      },
      { step: "initialize", name: "interleaveWorkerA" },
    );

    try {
      await new DynamoDbLeaseStore({ client: clientB, tableName }).ensure([tp]);
    } finally {
      clientB.destroy();
    }

    assert.ok(progressed, "worker A ran inside B's ensure");
    assert.deepEqual(await store.list(), [progressed]);
  });

  it("list returns every lease across scan pages", async () => {
    const { store, tableName } = await freshStore();
    const partitions = Array.from({ length: 300 }, (_, partition) => ({ topic: "big", partition }));
    await store.ensure(partitions);
    // Prepare: ~4 KiB of padding per item pushes 300 items past DynamoDB's 1 MB scan page.
    const padding = "x".repeat(4_096);
    for (const { partition } of partitions) {
      await db.client.send(
        new UpdateItemCommand({
          TableName: tableName,
          Key: { leaseKey: { S: `big:${partition}` } },
          UpdateExpression: "SET padding = :p",
          ExpressionAttributeValues: { ":p": { S: padding } },
        }),
      );
    }
    const firstPage = await db.client.send(new ScanCommand({ TableName: tableName, ConsistentRead: true }));
    assert.ok(firstPage.LastEvaluatedKey, "precondition: the table needs more than one scan page");

    const leases = await store.list();

    assert.deepEqual(
      leases.map((l) => l.partition).sort((a, b) => a - b),
      partitions.map((p) => p.partition),
    );
  });

  it("checkpoint never goes backwards, and repeating the stored checkpoint is harmless", async () => {
    const { store } = await freshStore();
    const free = await ensureOne(store);
    const t0 = Date.now();
    const claimedLease = await claimed(store, free, "worker-a", t0 + MINUTE);
    const at100 = await store.checkpoint(claimedLease, 100, t0 + 1);

    // With an up-to-date view the regression is caught before any write.
    await assert.rejects(store.checkpoint(at100, 50, t0 + 2), assertCode("LEASE_LOST", "checkpoint-ahead"));
    // With a stale view (checkpoint still null) the table's condition catches it.
    await assert.rejects(
      store.checkpoint(claimedLease, 50, t0 + 3),
      assertCode("LEASE_LOST", "checkpoint-ahead"),
    );
    // A retried write of the checkpoint that already landed succeeds without counting as progress.
    const repeated = await store.checkpoint(claimedLease, 100, t0 + 4);
    const same = await store.checkpoint(at100, 100, t0 + 5);

    assert.equal(repeated.checkpoint, 100);
    assert.equal(same.checkpoint, 100);
    const [stored] = await store.list();
    assert.equal(stored?.checkpoint, 100);
    assert.equal(stored?.lastProgressAt, t0 + 1);
  });

  it("stores the target position with its checkpoint, also on a checkpoint that stays put, and only for the holder", async () => {
    const { store } = await freshStore();
    const free = await ensureOne(store);
    const t0 = Date.now();
    const held = await claimed(store, free, "worker-a", t0 + MINUTE);

    const pinned = await store.checkpoint(held, 10, t0 + 1, 700);
    const plain = await store.checkpoint(pinned, 20, t0 + 2);
    const repositioned = await store.checkpoint(plain, 20, t0 + 3, 750);
    const stolen = await claimed(store, repositioned, "worker-b", t0 + MINUTE);
    await assert.rejects(store.checkpoint(repositioned, 30, t0 + 4, 900), assertCode("LEASE_LOST", "taken"));

    assert.equal(pinned.targetOffset, 700);
    assert.equal(plain.targetOffset, 700, "a checkpoint without a position keeps the stored one");
    assert.deepEqual([repositioned.checkpoint, repositioned.targetOffset], [20, 750]);
    const [stored] = await store.list();
    assert.deepEqual([stored?.owner, stored?.checkpoint, stored?.targetOffset], [stolen.owner, 20, 750]);
  });

  it("lastProgressAt moves only when the checkpoint advances", async () => {
    const { store } = await freshStore();
    const free = await ensureOne(store);
    const t0 = Date.now();
    const held = await claimed(store, free, "worker-a", t0 + MINUTE);

    const first = await store.checkpoint(held, 10, t0 + 1);
    const unchanged = await store.checkpoint(first, 10, t0 + 2);
    const advanced = await store.checkpoint(unchanged, 11, t0 + 3);

    assert.equal(first.lastProgressAt, t0 + 1);
    assert.equal(unchanged.lastProgressAt, t0 + 1);
    assert.equal(advanced.lastProgressAt, t0 + 3);
  });

  it("list skips a malformed item, naming its key and attribute, and lists the rest", async () => {
    const logger = new CapturingLogger();
    const metrics = new CapturingMetrics();
    const tableName = await db.freshLeaseTable();
    const store = new DynamoDbLeaseStore({ client: db.client, tableName, logger, metrics });
    await store.ensure([{ topic: "orders", partition: 0 }]);
    await db.client.send(
      new PutItemCommand({
        TableName: tableName,
        Item: {
          leaseKey: { S: "orders:1" },
          topic: { S: "orders" },
          partition: { N: "1" },
          counter: { S: "seven" },
          expiresAt: { N: "0" },
        },
      }),
    );

    const leases = await store.list();

    assert.deepEqual(
      leases.map((l) => `${l.topic}:${l.partition}`),
      ["orders:0"],
    );
    assert.deepEqual(metrics.skipped, [{ leaseKey: "orders:1", attribute: "counter" }]);
    const [warning, ...more] = logger.at("warn");
    assert.equal(more.length, 0);
    assert.equal(warning?.fields.leaseKey, "orders:1");
    assert.equal(warning?.fields.attribute, "counter");
    assert.doesNotMatch(JSON.stringify(warning), /seven/);
  });

  it("a missing table gives LEASE_STORE_INVALID", async () => {
    const store = new DynamoDbLeaseStore({ client: db.client, tableName: `missing-${randomUUID()}` });

    await assert.rejects(store.list(), assertCode("LEASE_STORE_INVALID"));
    await assert.rejects(
      store.ensure([{ topic: "orders", partition: 0 }]),
      assertCode("LEASE_STORE_INVALID"),
    );
  });

  it("a table with the wrong key schema gives LEASE_STORE_INVALID", async () => {
    const tableName = `wrong-${randomUUID()}`;
    await db.client.send(
      new CreateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [
          { AttributeName: "pk", AttributeType: "S" },
          { AttributeName: "sk", AttributeType: "N" },
        ],
        KeySchema: [
          { AttributeName: "pk", KeyType: "HASH" },
          { AttributeName: "sk", KeyType: "RANGE" },
        ],
        BillingMode: "PAY_PER_REQUEST",
      }),
    );
    const store = new DynamoDbLeaseStore({ client: db.client, tableName });

    await assert.rejects(describeLeaseTable(db.client, tableName), (error: unknown) => {
      assert.ok(isReplicatorError(error, "LEASE_STORE_INVALID"));
      assert.match(error.message, /partition key must be "leaseKey", found "pk".*no sort key, found "sk"/);
      return true;
    });
    await assert.rejects(createLeaseTable(db.client, tableName), assertCode("LEASE_STORE_INVALID"));
    await assert.rejects(
      store.ensure([{ topic: "orders", partition: 0 }]),
      assertCode("LEASE_STORE_INVALID"),
    );
  });

  it("createLeaseTable accepts a table that already exists with the right schema", async () => {
    const { tableName } = await freshStore();

    await createLeaseTable(db.client, tableName);

    const table = await describeLeaseTable(db.client, tableName);
    assert.equal(table.TableStatus, "ACTIVE");
    assert.equal(table.BillingModeSummary?.BillingMode, "PAY_PER_REQUEST");
  });
});

describe("DynamoDbLeaseStore when DynamoDB Local goes away", () => {
  let ddb: DynamoDbLocal;
  let client: DynamoDBClient;
  let dbPath: string;

  before(async () => {
    dbPath = mkdtempSync(join(tmpdir(), "kafka-mirror-ddb-"));
    ddb = await startDynamoDbLocal({ dbPath });
    client = ddb.client();
  });
  after(async () => {
    client.destroy();
    await ddb.stop();
    rmSync(dbPath, { recursive: true, force: true });
  });

  it("fails fast with a retryable LEASE_STORE_UNAVAILABLE, and works again after a restart", async () => {
    const tableName = `leases-${randomUUID()}`;
    await createLeaseTable(client, tableName);
    const store = new DynamoDbLeaseStore({ client, tableName });
    await store.ensure([{ topic: "orders", partition: 0 }]);
    const [free] = await store.list();
    assert.ok(free);
    const held = await claimed(store, free, "worker-a", Date.now() + MINUTE);
    await ddb.stop();

    const started = Date.now();
    for (const operation of [
      () => store.list(),
      () => store.claim(free, "worker-b", Date.now() + MINUTE),
      () => store.checkpoint(held, 10, Date.now()),
      () => store.ensure([{ topic: "orders", partition: 1 }]),
    ]) {
      await assert.rejects(operation(), (error: unknown) => {
        assert.ok(isReplicatorError(error, "LEASE_STORE_UNAVAILABLE"), String(error));
        assert.equal(error.retryable, true);
        assert.ok(error.cause, "keeps the SDK error as cause");
        return true;
      });
    }
    assert.ok(Date.now() - started < 20_000, "failures come within the client's timeouts");

    await ddb.restart();
    const after10 = await store.checkpoint(held, 10, Date.now());
    assert.equal(after10.checkpoint, 10);
    assert.equal(after10.owner, "worker-a");
  });

  async function claimed(store: DynamoDbLeaseStore, observed: Lease, owner: string, expiresAt: number) {
    const lease = await store.claim(observed, owner, expiresAt);
    assert.ok(lease);
    return lease;
  }
});
