/**
 * `kafka-mirror stop-store`: the embedded lease store of a state directory stops now instead of
 * after its 10 idle minutes, keeping its checkpoints; with none running it says so (exit 0).
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { ensureLeaseServer, stopLeaseServer } from "../../../lib/dynamodb/embedded/ensure.js";
import { spawnCli } from "../../helpers/cli.js";
import { isRunning } from "../../helpers/processes.js";

describe("kafka-mirror stop-store", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "kafka-mirror-cli-stop-store-"));
  });
  after(async () => {
    await stopLeaseServer(join(dir, "state"));
    await rm(dir, { recursive: true, force: true });
  });

  it("stops the state directory's server, keeps its data, and says when none runs", async () => {
    const stateDir = join(dir, "state");
    const { pid } = await ensureLeaseServer(stateDir);
    assert.ok(isRunning(pid));

    const stop = await spawnCli(["stop-store", "--state-dir", stateDir], { cwd: dir, killAfterMs: 30_000 });

    assert.equal(stop.code, 0, stop.stdout + stop.stderr);
    assert.equal(
      stop.stdout,
      `stopped the embedded lease store of ${stateDir} (pid ${pid}); its checkpoints stay in the directory\n`,
    );
    assert.equal(isRunning(pid), false, "the server process is gone");
    assert.ok(existsSync(join(stateDir, "leases")), "the data directory stays");

    const again = await spawnCli(["stop-store", "--state-dir", stateDir], { cwd: dir, killAfterMs: 30_000 });
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.equal(again.stdout, `no embedded lease store runs for ${stateDir}\n`);
  });

  it("finds the state directory next to --config, as the other commands do, and needs one or the other", async () => {
    const configDir = join(dir, "configs");
    await mkdir(configDir, { recursive: true });
    const config = join(configDir, "mirror.yaml");
    await writeFile(config, "");
    const stateDir = join(configDir, ".kafka-mirror");
    const { pid } = await ensureLeaseServer(stateDir);
    try {
      const stop = await spawnCli(["stop-store", "--config", config], { cwd: dir, killAfterMs: 30_000 });
      assert.equal(stop.code, 0, stop.stdout + stop.stderr);
      assert.match(
        stop.stdout,
        new RegExp(`^stopped the embedded lease store of ${stateDir} \\(pid ${pid}\\)`),
      );
      assert.equal(isRunning(pid), false, "the server process is gone");

      const neither = await spawnCli(["stop-store"], { cwd: dir, killAfterMs: 30_000 });
      assert.equal(neither.code, 2);
      assert.match(
        neither.stderr,
        /stop-store needs --config FILE \(its state directory\) or --state-dir DIR/,
      );
    } finally {
      await stopLeaseServer(stateDir);
    }
  });
});
