/**
 * Who can use the embedded lease store: only the owner of its state directory. The directory
 * is 0700 and its files 0600, and the server refuses every request without the directory's
 * secret, so another local user who finds the loopback port can neither read nor write
 * checkpoints.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { chmod, mkdir, mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { createEmbeddedLeaseClient } from "../../../../lib/dynamodb/embedded/client.js";
import { stopLeaseServer } from "../../../../lib/dynamodb/embedded/ensure.js";
import {
  readServerRecord,
  SECRET_FILE,
  SECRET_HEADER,
} from "../../../../lib/dynamodb/embedded/server-file.js";
import { DynamoDbLeaseStore } from "../../../../lib/dynamodb/lease-store.js";
import { createLeaseTable } from "../../../../lib/dynamodb/lease-table.js";
import { bundleForOtherUsers } from "../../../helpers/other-user-bundle.js";

const TABLE = "embedded-access";
const TP = { topic: "BIN-BI-TOPIC", partition: 0 };
const NOBODY = 65534;

/** A DynamoDB JSON request as the SDK sends it; dynalite checks a signature is present only. */
function dynamoRequest(port: number, target: string, body: unknown, secret?: string): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}/`, {
    method: "POST",
    headers: {
      "content-type": "application/x-amz-json-1.0",
      "x-amz-target": `DynamoDB_20120810.${target}`,
      authorization:
        "AWS4-HMAC-SHA256 Credential=local/20200101/local/dynamodb/aws4_request, SignedHeaders=host, Signature=0",
      "x-amz-date": "20200101T000000Z",
      ...(secret === undefined ? {} : { [SECRET_HEADER]: secret }),
    },
    body: JSON.stringify(body),
  });
}

const leaseKey = { leaseKey: { S: "BIN-BI-TOPIC:0" } };

describe("embedded lease store: access", () => {
  let dir: string;
  let port: number;
  let client: DynamoDBClient;
  let store: DynamoDbLeaseStore;

  before(async () => {
    const parent = await mkdtemp(join(tmpdir(), "kafka-mirror-access-"));
    dir = join(parent, "state");
    // An existing directory anyone can read: the store tightens it before using it.
    await mkdir(dir, { mode: 0o755 });
    await chmod(dir, 0o755);
    client = await createEmbeddedLeaseClient({ stateDir: dir });
    await createLeaseTable(client, TABLE);
    store = new DynamoDbLeaseStore({ client, tableName: TABLE });
    await store.ensure([TP]);
    const [free] = await store.list();
    assert.ok(free);
    const held = await store.claim(free, "worker-a", Date.now() + 60_000);
    assert.ok(held);
    await store.checkpoint(held, 4_242, Date.now());
    const record = await readServerRecord(dir);
    assert.ok(record);
    port = record.port;
  });

  after(async () => {
    client.destroy();
    await stopLeaseServer(dir);
    await rm(join(dir, ".."), { recursive: true, force: true });
  });

  it("refuses a read without the secret, or with a wrong one", async () => {
    for (const secret of [undefined, "0".repeat(64), ""]) {
      const scan = await dynamoRequest(port, "Scan", { TableName: TABLE }, secret);
      const body = await scan.text();
      assert.equal(scan.status, 403, body);
      assert.doesNotMatch(body, /4242|worker-a/);
      const get = await dynamoRequest(port, "GetItem", { TableName: TABLE, Key: leaseKey }, secret);
      assert.equal(get.status, 403, await get.text());
    }
  });

  it("refuses a write without the secret, and the checkpoint stays as it was", async () => {
    const put = await dynamoRequest(port, "UpdateItem", {
      TableName: TABLE,
      Key: leaseKey,
      UpdateExpression: "SET #c = :c, #o = :o",
      ExpressionAttributeNames: { "#c": "checkpoint", "#o": "owner" },
      ExpressionAttributeValues: { ":c": { N: "0" }, ":o": { S: "intruder" } },
    });
    assert.equal(put.status, 403, await put.text());
    const drop = await dynamoRequest(port, "DeleteTable", { TableName: TABLE });
    assert.equal(drop.status, 403, await drop.text());

    const [lease] = await store.list();
    assert.equal(lease?.checkpoint, 4_242);
    assert.equal(lease?.owner, "worker-a");
  });

  it("keeps the state directory 0700 and every file in it 0600", async () => {
    assert.equal((await stat(dir)).mode & 0o777, 0o700);
    const files = await listFiles(dir);
    assert.ok(files.some((f) => f.endsWith(SECRET_FILE)) && files.length > 3, files.join(", "));
    for (const file of files) assert.equal((await stat(file)).mode & 0o777, 0o600, file);
  });

  it("keeps another local user's process from reading the secret or using the store", {
    skip: process.getuid?.() === 0 ? false : "needs root to run a process as another user",
  }, async () => {
    const script = [
      "const fs = require('node:fs');",
      "let read = 'read';",
      `try { fs.readFileSync(${JSON.stringify(join(dir, SECRET_FILE))}); } catch (e) { read = e.code; }`,
      `fetch('http://127.0.0.1:${port}/', { method: 'POST', headers: { 'x-amz-target': 'DynamoDB_20120810.Scan',`,
      "  'content-type': 'application/x-amz-json-1.0' }, body: '{}' })",
      "  .then((r) => console.log(JSON.stringify({ read, status: r.status })));",
    ].join("\n");
    const { stdout } = await promisify(execFile)(process.execPath, ["-e", script], {
      uid: NOBODY,
      gid: NOBODY,
      cwd: "/",
    });
    assert.deepEqual(JSON.parse(stdout), { read: "EACCES", status: 403 });
  });
});

describe("embedded lease store: a state directory someone else owns", () => {
  it("is refused, though a server record in it could name a live server", {
    skip: process.getuid?.() === 0 ? false : "needs root to run a process as another user",
  }, async () => {
    // World-writable, so only the ownership check can refuse it: writing into it would succeed.
    const owned = await mkdtemp(join(tmpdir(), "kafka-mirror-owned-"));
    await chmod(owned, 0o777);
    // Bundled into a directory anyone can read, run from "/": nobody may not be able to enter
    // the checkout (a clone under /root is 0700), so it must not load tsx or our sources there.
    const probeDir = await mkdtemp(join(tmpdir(), "kafka-mirror-probe-"));
    const probe = join(probeDir, "probe.ts");
    const ensure = fileURLToPath(new URL("../../../../lib/dynamodb/embedded/ensure.ts", import.meta.url));
    await writeFile(
      probe,
      `import { ensureLeaseServer } from ${JSON.stringify(ensure)};\n` +
        `ensureLeaseServer(${JSON.stringify(owned)}).then(() => console.log("started"), (e) => console.log(e.code));\n`,
    );
    const bundleDir = await bundleForOtherUsers({ probe });
    const bundle = join(bundleDir, "probe.js");
    try {
      const { stdout } = await promisify(execFile)(process.execPath, [bundle], {
        uid: NOBODY,
        gid: NOBODY,
        cwd: "/",
      });
      // Not retryable: chmod will fail the same way every time.
      assert.equal(stdout.trim(), "STATE_DIR_UNUSABLE");
    } finally {
      await stopLeaseServer(owned);
      await rm(owned, { recursive: true, force: true });
      await rm(bundleDir, { recursive: true, force: true });
      await rm(probeDir, { recursive: true, force: true });
    }
  });
});

async function listFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(root, { withFileTypes: true })) {
    const path = join(root, entry.name);
    if (entry.isDirectory()) {
      assert.equal((await stat(path)).mode & 0o777, 0o700, path);
      out.push(...(await listFiles(path)));
    } else out.push(path);
  }
  return out;
}
