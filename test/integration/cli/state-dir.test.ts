/**
 * A state directory the embedded lease store cannot use is bad input: the real `kafka-mirror`
 * process says so in one line naming the directory and what is wrong, and exits 2 within
 * seconds. Regression: `status --state-dir /proc/nope` spun in mkdir for ten minutes (`status`
 * no longer creates a store; `run` does).
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { DATA_DIR } from "../../../lib/dynamodb/embedded/server-file.js";
import { type SpawnCliOptions, type SpawnedCliResult, spawnCli } from "../../helpers/cli.js";
import { cliConfigYaml } from "../../helpers/cli-config.js";
import { type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";

/** A failing state directory is found in well under a second once the clusters answered. */
const WITHIN_MS = 15_000;
const ONE_LINE = /^kafka-mirror: [^\n]+\n$/;

describe("kafka-mirror with a state directory it cannot use", () => {
  let kafka: MockKafka;
  let dir: string;
  let config: string;

  before(async () => {
    kafka = await startMockKafka({ brokers: 1 });
    const topic = `STATE-DIR-${randomUUID()}`;
    await kafka.createTopic(topic, 1);
    dir = await mkdtemp(join(tmpdir(), "kafka-mirror-state-dir-"));
    // Readable by the other user one test runs the CLI as.
    await chmod(dir, 0o755);
    config = join(dir, "mirror.yaml");
    const servers = kafka.bootstrapServers;
    await writeFile(config, cliConfigYaml({ source: servers, target: servers, whitelist: topic }), {
      mode: 0o644,
    });
  });

  after(async () => {
    await kafka?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  // `run` creates the store; the commands that only read never do (read-state.test.ts).
  const run = (stateDir: string, options: SpawnCliOptions = {}): Promise<SpawnedCliResult> =>
    spawnCli(["run", "--once", "--config", config, "--state-dir", stateDir], {
      killAfterMs: WITHIN_MS,
      ...options,
    });

  /** Exit 2 in time, and stderr is one line naming the directory and matching `why`. */
  const expectUnusable = (result: SpawnedCliResult, stateDir: string, why: RegExp): void => {
    assert.equal(result.code, 2, `exit code after ${result.elapsedMs} ms; stderr: ${result.stderr}`);
    assert.ok(result.elapsedMs < WITHIN_MS, `${result.elapsedMs} ms`);
    assert.match(result.stderr, ONE_LINE);
    assert.ok(result.stderr.includes(`state directory ${stateDir} cannot be used: `), result.stderr);
    assert.match(result.stderr, why);
    assert.match(result.stderr, /it must be a directory this user can create, or one it owns and can write/);
  };

  it("under /proc, where mkdir answers ENOENT for ever", {
    skip: existsSync("/proc/self") ? false : "needs procfs",
  }, async () => {
    expectUnusable(await run("/proc/nope"), "/proc/nope", /mkdir \/proc\/nope: ENOENT \(a parent is missing/);
  });

  it("under a regular file", async () => {
    const file = join(dir, "a-file");
    await writeFile(file, "");
    const stateDir = join(file, "state");
    expectUnusable(await run(stateDir), stateDir, /ENOTDIR \(a file stands where a directory must be\)/);
  });

  it("with a file where the embedded store's data directory goes: the store does not start", async () => {
    const stateDir = join(dir, "data-is-a-file");
    await mkdir(stateDir);
    await writeFile(join(stateDir, DATA_DIR), "");
    expectUnusable(await run(stateDir), stateDir, new RegExp(`mkdir \\S+/${DATA_DIR}: ENOTDIR`));
  });

  it("in a directory this user cannot write", async () => {
    const readOnly = join(dir, "read-only");
    await mkdir(readOnly);
    await chmod(readOnly, 0o555);
    const stateDir = join(readOnly, "state");
    // Root writes anywhere: as root, run the CLI without the capability that lets it.
    const options = process.getuid?.() === 0 ? { withoutRootOverride: true } : {};
    expectUnusable(await run(stateDir, options), stateDir, /mkdir \S+: EACCES \(permission denied\)/);
  });
});
