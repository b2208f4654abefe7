/**
 * The embedded lease store: checkpoints survive the server's restart, several processes that
 * start at once end up sharing one server, a stale server.json is replaced, and a failed
 * condition still tells DynamoDbLeaseStore why (dynalite itself ignores
 * ReturnValuesOnConditionCheckFailure).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { createEmbeddedLeaseClient } from "../../../../lib/dynamodb/embedded/client.js";
import { ensureLeaseServer, stopLeaseServer } from "../../../../lib/dynamodb/embedded/ensure.js";
import {
  isProcessAlive,
  readServerRecord,
  SERVER_FILE,
} from "../../../../lib/dynamodb/embedded/server-file.js";
import { DynamoDbLeaseStore } from "../../../../lib/dynamodb/lease-store.js";
import { createLeaseTable } from "../../../../lib/dynamodb/lease-table.js";
import { isReplicatorError } from "../../../../lib/errors.js";

const TABLE = "embedded-leases";
const TP = { topic: "BIN-BI-TOPIC", partition: 3 };

describe("embedded lease store", () => {
  let dir: string;
  const clients: DynamoDBClient[] = [];
  const dirs: string[] = [];

  const stateDir = async (): Promise<string> => {
    const d = await mkdtemp(join(tmpdir(), "kafka-mirror-state-"));
    dirs.push(d);
    return d;
  };
  const client = async (d: string): Promise<DynamoDBClient> => {
    const c = await createEmbeddedLeaseClient({ stateDir: d });
    clients.push(c);
    return c;
  };

  before(async () => {
    dir = await stateDir();
  });

  after(async () => {
    for (const c of clients) c.destroy();
    for (const d of dirs) {
      await stopLeaseServer(d);
      await rm(d, { recursive: true, force: true });
    }
  });

  it("keeps checkpoints across a restart of its server, which the client starts again by itself", async () => {
    const c = await client(dir);
    await createLeaseTable(c, TABLE);
    const store = new DynamoDbLeaseStore({ client: c, tableName: TABLE });
    await store.ensure([TP]);
    const [free] = await store.list();
    assert.ok(free);
    const held = await store.claim(free, "worker-a", Date.now() + 60_000);
    assert.ok(held);
    await store.checkpoint(held, 4_242, Date.now());
    const first = await readServerRecord(dir);

    await stopLeaseServer(dir);
    assert.ok(first !== null && !isProcessAlive(first.pid));

    // Same client, no reconnect by the caller: the next request starts a server on the same data.
    const [again] = await store.list();
    assert.equal(again?.checkpoint, 4_242);
    assert.equal(again?.owner, "worker-a");
    const second = await readServerRecord(dir);
    assert.ok(second !== null && second.pid !== first.pid && isProcessAlive(second.pid));
  });

  it("gives processes that start at the same moment one shared server", async () => {
    const d = await stateDir();
    const ensureUrl = new URL("../../../../lib/dynamodb/embedded/ensure.ts", import.meta.url).href;
    const file = join(d, "probe.mts");
    await writeFile(
      file,
      [
        `import { ensureLeaseServer } from ${JSON.stringify(ensureUrl)};`,
        `const r = await ensureLeaseServer(${JSON.stringify(d)});`,
        "console.log(JSON.stringify(r));",
      ].join("\n"),
    );
    const outputs = await Promise.all(
      [1, 2, 3].map(
        () =>
          new Promise<string>((resolve, reject) => {
            const child = spawn(process.execPath, ["--import", "tsx", file], {
              stdio: ["ignore", "pipe", "inherit"],
            });
            let out = "";
            child.stdout.on("data", (chunk: Buffer) => {
              out += chunk.toString("utf8");
            });
            child.once("error", reject);
            child.once("close", (code) =>
              code === 0 ? resolve(out.trim()) : reject(new Error(`exit ${code}`)),
            );
          }),
      ),
    );
    const records = outputs.map((o) => JSON.parse(o) as { pid: number; port: number });
    assert.equal(new Set(records.map((r) => r.pid)).size, 1, `one server for all: ${outputs.join(" ")}`);
    assert.deepEqual(await readServerRecord(d), records[0]);
  });

  it("replaces a server.json whose process is gone", async () => {
    const d = await stateDir();
    // A pid that is certainly not running: a child that already exited.
    const dead = await new Promise<number>((resolve) => {
      const child = spawn(process.execPath, ["-e", ""]);
      child.once("exit", () => resolve(child.pid ?? 0));
    });
    await writeFile(join(d, SERVER_FILE), JSON.stringify({ pid: dead, port: 1 }));
    const record = await ensureLeaseServer(d);
    assert.notEqual(record.pid, dead);
    assert.ok(isProcessAlive(record.pid));
  });

  it("tells the lease store the current item when a condition fails", async () => {
    const c = await client(await stateDir());
    await createLeaseTable(c, TABLE);
    const store = new DynamoDbLeaseStore({ client: c, tableName: TABLE });
    const tp = { topic: "PUSH-BI-TOPIC", partition: 0 };
    await store.ensure([tp]);
    const free = (await store.list()).find((l) => l.topic === tp.topic);
    assert.ok(free);
    const held = await store.claim(free, "worker-a", Date.now() + 60_000);
    assert.ok(held);
    const advanced = await store.checkpoint(held, 100, Date.now());
    // A retry of a checkpoint that already landed, from the stale view: the store reads the
    // current item, sees its own write, and succeeds instead of calling the lease lost.
    const retried = await store.checkpoint(held, 100, Date.now());
    assert.equal(retried.checkpoint, 100);
    assert.equal(retried.counter, advanced.counter);

    // Taken over: LEASE_LOST with the new owner read from the current item.
    const taken = await store.claim(advanced, "worker-b", Date.now() + 60_000);
    assert.ok(taken);
    await assert.rejects(
      () => store.renew(advanced, Date.now() + 60_000),
      (error: unknown) =>
        isReplicatorError(error, "LEASE_LOST") &&
        error.details.reason === "taken" &&
        error.details.currentOwner === "worker-b",
    );
  });
});
