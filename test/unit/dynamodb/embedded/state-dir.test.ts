import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { DATA_DIR } from "../../../../lib/dynamodb/embedded/server-file.js";
import {
  hasEmbeddedStore,
  makeDirectory,
  stateDirError,
} from "../../../../lib/dynamodb/embedded/state-dir.js";
import { ReplicatorError } from "../../../../lib/errors.js";

/** Node's recursive mkdir spun for ever on these; a working walk fails in milliseconds. */
const FAILS_WITHIN_MS = 5_000;

describe("makeDirectory", () => {
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "kafka-mirror-state-dir-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("makes every missing parent, with the mode given", async () => {
    const path = join(dir, "a", "b", "c");
    await makeDirectory(path, 0o700);
    assert.equal((await stat(path)).mode & 0o777, 0o700);
    assert.ok((await stat(join(dir, "a"))).isDirectory());
  });

  it("accepts a directory that is there already, or that a racing process makes", async () => {
    const path = join(dir, "race", "state");
    await Promise.all([makeDirectory(path, 0o700), makeDirectory(path, 0o700), makeDirectory(path, 0o700)]);
    await makeDirectory(path, 0o700);
    assert.ok((await stat(path)).isDirectory());
  });

  // Regression: `kafka-mirror status --state-dir /proc/nope` spun at 1,300 mkdir a second.
  it("fails at once with ENOENT under a parent that cannot hold directories (/proc)", {
    skip: existsSync("/proc/self") ? false : "needs procfs",
    timeout: FAILS_WITHIN_MS,
  }, async () => {
    await assert.rejects(makeDirectory("/proc/nope/state", 0o700), { code: "ENOENT" });
    await assert.rejects(makeDirectory("/proc/nope", 0o700), { code: "ENOENT" });
  });

  it("fails at once with ENOTDIR under a regular file, or on one", { timeout: FAILS_WITHIN_MS }, async () => {
    const file = join(dir, "a-file");
    await writeFile(file, "");
    await assert.rejects(makeDirectory(join(file, "state"), 0o700), { code: "ENOTDIR" });
    await assert.rejects(makeDirectory(file, 0o700), { code: "ENOTDIR", path: file });
  });
});

describe("stateDirError", () => {
  const fsError = (code: string, path = "/srv/state"): NodeJS.ErrnoException =>
    Object.assign(new Error(`${code}: ..., mkdir '${path}'`), { code, syscall: "mkdir", path });

  for (const code of ["ENOENT", "ENOTDIR", "EACCES", "EPERM", "EROFS", "ENOSPC", "EEXIST"]) {
    it(`makes ${code} STATE_DIR_UNUSABLE, not retryable, naming the path and the errno`, () => {
      const error = stateDirError("/srv/state", fsError(code));
      assert.equal(error.code, "STATE_DIR_UNUSABLE");
      assert.equal(error.retryable, false);
      assert.match(
        error.message,
        new RegExp(`^state directory /srv/state cannot be used: mkdir /srv/state: ${code} `),
      );
      assert.doesNotMatch(error.message, /\n/);
      assert.deepEqual(error.details, {
        stateDir: "/srv/state",
        path: "/srv/state",
        syscall: "mkdir",
        errno: code,
      });
    });
  }

  for (const code of ["EMFILE", "ENFILE", "EAGAIN", "EBUSY", "EINTR"]) {
    it(`keeps ${code}, which may pass by itself, LEASE_STORE_UNAVAILABLE and retryable`, () => {
      const error = stateDirError("/srv/state", fsError(code));
      assert.equal(error.code, "LEASE_STORE_UNAVAILABLE");
      assert.equal(error.retryable, true);
    });
  }

  it("passes a ReplicatorError through as it is", () => {
    const original = new ReplicatorError("STATE_DIR_UNUSABLE", "already said");
    assert.equal(stateDirError("/srv/state", original), original);
  });
});

describe("hasEmbeddedStore", () => {
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "kafka-mirror-has-store-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("is false where nothing is, and creates nothing", async () => {
    const path = join(dir, "nothing", "here");
    assert.equal(await hasEmbeddedStore(path), false);
    assert.equal(existsSync(join(dir, "nothing")), false);
  });

  it("is false for a directory without the store's data directory, and writes nothing into it", async () => {
    const path = join(dir, "empty");
    await mkdir(path);
    assert.equal(await hasEmbeddedStore(path), false);
    assert.deepEqual(await readdir(path), []);
  });

  it("is true for a directory holding the data directory", async () => {
    const path = join(dir, "store");
    await mkdir(join(path, DATA_DIR), { recursive: true });
    assert.equal(await hasEmbeddedStore(path), true);
  });

  it("is STATE_DIR_UNUSABLE for a file where the data directory goes, or under a file", async () => {
    const path = join(dir, "file-data");
    await mkdir(path);
    await writeFile(join(path, DATA_DIR), "");
    const file = join(dir, "a-file");
    await writeFile(file, "");
    for (const unusable of [path, join(file, "state")]) {
      await assert.rejects(hasEmbeddedStore(unusable), (error: unknown) => {
        assert.ok(error instanceof ReplicatorError);
        assert.equal(error.code, "STATE_DIR_UNUSABLE");
        assert.match(error.message, /ENOTDIR \(a file stands where a directory must be\)/);
        return true;
      });
    }
  });
});
