/**
 * createLeaseTable's wait for ACTIVE looks again only while that may help: a table deleted while
 * it waits fails it at once (LEASE_STORE_INVALID). The SDK's waitUntilTableExists, used before,
 * retried that for its whole five minutes. Runs on the embedded store (dynalite), whose
 * DeleteTable leaves the table DELETING for half a second, then gone.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { DeleteTableCommand, type DynamoDBClient, ResourceInUseException } from "@aws-sdk/client-dynamodb";
import { createEmbeddedLeaseClient } from "../../../lib/dynamodb/embedded/client.js";
import { stopLeaseServer } from "../../../lib/dynamodb/embedded/ensure.js";
import { createLeaseTable } from "../../../lib/dynamodb/lease-table.js";
import { isReplicatorError } from "../../../lib/errors.js";

/** One look, one pause of 1 s while DELETING, one more look. */
const AT_ONCE_MS = 5_000;

/**
 * Deletes `table`, trying again while it is still CREATING: dynalite refuses DeleteTable then with
 * ResourceInUseException (its CREATING lasts until a 0 ms timer fires), which, thrown from the
 * middleware, createLeaseTable would take for "someone else created it" and find it ACTIVE.
 */
async function deleteOnceCreated(client: DynamoDBClient, table: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await client.send(new DeleteTableCommand({ TableName: table }));
      return;
    } catch (error) {
      if (!(error instanceof ResourceInUseException) || attempt === 50) throw error;
      await sleep(10);
    }
  }
}

describe("createLeaseTable", () => {
  let dir: string;
  let client: DynamoDBClient;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "kafka-mirror-lease-table-"));
    client = await createEmbeddedLeaseClient({ stateDir: dir });
  });
  after(async () => {
    client?.destroy();
    await stopLeaseServer(dir);
    await rm(dir, { recursive: true, force: true });
  });

  it("stops waiting at once when the table is deleted before it is seen ACTIVE", {
    timeout: 60_000,
  }, async () => {
    // Prepare: someone deletes the table as soon as it is created.
    const table = "deleted-meanwhile";
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const out = await next(args);
        if (context.commandName === "CreateTableCommand") await deleteOnceCreated(client, table);
        return out;
      },
      { step: "initialize", name: "deleteRightAfterCreate" },
    );

    // Act
    const startedAt = Date.now();
    const error = await createLeaseTable(client, table).then(
      () => undefined,
      (e: unknown) => e,
    );

    // Assess
    const elapsedMs = Date.now() - startedAt;
    assert.ok(isReplicatorError(error, "LEASE_STORE_INVALID"), String(error));
    assert.match(error.message, /lease table deleted-meanwhile does not exist/);
    assert.ok(elapsedMs < AT_ONCE_MS, `${elapsedMs} ms`);
  });
});
