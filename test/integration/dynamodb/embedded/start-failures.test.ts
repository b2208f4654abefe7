/**
 * The embedded lease server does not start in a state directory it cannot use, and whoever
 * starts it hears so at once: STATE_DIR_UNUSABLE, not retryable, naming the path. Before, a
 * file where LevelDB's directory goes crashed the server ("Database is not open") and the caller
 * waited out a grace period for a racing server, then called the store unreachable (retryable).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { createEmbeddedLeaseClient } from "../../../../lib/dynamodb/embedded/client.js";
import { ensureLeaseServer, stopLeaseServer } from "../../../../lib/dynamodb/embedded/ensure.js";
import { DATA_DIR, LOG_FILE, SERVER_EXIT } from "../../../../lib/dynamodb/embedded/server-file.js";
import { DynamoDbLeaseStore } from "../../../../lib/dynamodb/lease-store.js";
import { createLeaseTable } from "../../../../lib/dynamodb/lease-table.js";
import { isReplicatorError } from "../../../../lib/errors.js";

/** Shorter than the race grace (3 s) that an unexpected server exit waits for. */
const AT_ONCE_MS = 2_500;
const TABLE = "start-failures";
const DAEMON = fileURLToPath(new URL("../../../../lib/dynamodb/embedded/daemon.ts", import.meta.url));

describe("embedded lease server in a state directory it cannot use", () => {
  let root: string;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), "kafka-mirror-start-"));
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  /** A state directory with `prepare` done to it; the server is stopped afterwards if it started. */
  const startIn = async (name: string, prepare: (dir: string) => Promise<void>) => {
    const dir = join(root, name);
    await mkdir(dir);
    await prepare(dir);
    const startedAt = Date.now();
    try {
      await ensureLeaseServer(dir, { startTimeoutMs: 15_000 });
      return { error: undefined, elapsedMs: Date.now() - startedAt };
    } catch (error) {
      return { error, elapsedMs: Date.now() - startedAt };
    } finally {
      await stopLeaseServer(dir);
    }
  };

  it("fails at once when a file stands where LevelDB's directory goes", async () => {
    const { error, elapsedMs } = await startIn("data-is-a-file", (dir) => writeFile(join(dir, DATA_DIR), ""));
    assert.ok(isReplicatorError(error, "STATE_DIR_UNUSABLE"), String(error));
    assert.equal(error.retryable, false);
    assert.match(error.message, new RegExp(`mkdir \\S+/${DATA_DIR}: ENOTDIR`));
    assert.ok(elapsedMs < AT_ONCE_MS, `${elapsedMs} ms`);
  });

  it("fails at once when its log cannot be opened", async () => {
    const { error, elapsedMs } = await startIn("log-is-a-directory", (dir) => mkdir(join(dir, LOG_FILE)));
    assert.ok(isReplicatorError(error, "STATE_DIR_UNUSABLE"), String(error));
    assert.match(error.message, new RegExp(`open \\S+/${LOG_FILE}: EISDIR`));
    assert.ok(elapsedMs < AT_ONCE_MS, `${elapsedMs} ms`);
  });

  it("fails a store call at once when the server it restarts finds the directory unusable", async () => {
    // Prepare: a working store whose server then stops, and whose data directory is replaced.
    const dir = join(root, "unusable-later");
    const client = await createEmbeddedLeaseClient({ stateDir: dir });
    try {
      await createLeaseTable(client, TABLE);
      const store = new DynamoDbLeaseStore({ client, tableName: TABLE });
      await store.list();
      await stopLeaseServer(dir);
      await rm(join(dir, DATA_DIR), { recursive: true });
      await writeFile(join(dir, DATA_DIR), "");

      // Act
      const startedAt = Date.now();
      const error = await store.list().then(
        () => undefined,
        (e: unknown) => e,
      );

      // Assess: final, so neither the worker nor a pump retries it until its deadline.
      assert.ok(isReplicatorError(error, "STATE_DIR_UNUSABLE"), String(error));
      assert.equal(error.retryable, false);
      assert.ok(Date.now() - startedAt < AT_ONCE_MS, `${Date.now() - startedAt} ms`);
    } finally {
      client.destroy();
      await stopLeaseServer(dir);
    }
  });

  it("has the server process exit with its own code and one line, so its starter need not wait", async () => {
    const file = join(root, "a-file");
    await writeFile(file, "");
    const child = spawn(process.execPath, ["--import", "tsx", DAEMON, join(file, "state"), "60000"], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString("utf8");
    });
    const [code] = await once(child, "close");
    assert.equal(code, SERVER_EXIT.stateDirUnusable, stderr);
    assert.match(
      stderr,
      /^lease server \d+ not started: state directory \S+ cannot be used: mkdir \S+: ENOTDIR/,
    );
    assert.equal(stderr.trim().split("\n").length, 1, stderr);
  });
});
