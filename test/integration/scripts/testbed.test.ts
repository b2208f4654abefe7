/**
 * `npm run testbed -- up` leaves two local clusters running, with a config file the CLI uses as
 * is, until `npm run testbed -- down` or Ctrl-C (issue 25: the launcher exits when its stdin
 * closes, so there was no documented way to keep clusters up and try the CLI against them).
 */
import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { spawnCli } from "../../helpers/cli.js";

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "scripts", "testbed.ts");

interface Up {
  readonly child: ChildProcessWithoutNullStreams;
  readonly output: () => string;
  readonly exited: Promise<number | null>;
}

function testbed(args: readonly string[]): Up {
  const child = spawn(process.execPath, ["--import", "tsx", SCRIPT, ...args], { stdio: "pipe" });
  let out = "";
  child.stdout.on("data", (c: Buffer) => {
    out += c.toString("utf8");
  });
  child.stderr.on("data", (c: Buffer) => {
    out += c.toString("utf8");
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output: () => out, exited };
}

async function configOf(up: Up): Promise<string> {
  const giveUpAt = Date.now() + 90_000;
  for (;;) {
    const match = /^config: (.+)$/m.exec(up.output());
    if (match?.[1] !== undefined) return match[1];
    if (up.child.exitCode !== null || Date.now() > giveUpAt)
      assert.fail(`testbed up did not start: ${up.output()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("npm run testbed", () => {
  let dir: string;
  const ups: Up[] = [];
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "kafka-mirror-testbed-up-"));
  });
  after(async () => {
    for (const up of ups) up.child.kill("SIGKILL");
    await rm(dir, { recursive: true, force: true });
  });

  it("up keeps two clusters and a ready config until down; the CLI plans with it as is", async () => {
    const up = testbed(["up", "--dir", dir, "--brokers", "1"]);
    ups.push(up);
    const config = await configOf(up);

    const plan = await spawnCli(["plan", "--config", config, "--json"], { killAfterMs: 60_000 });
    assert.equal(plan.code, 0, plan.stdout + plan.stderr);
    assert.deepEqual(
      (JSON.parse(plan.stdout) as { selected: { source: string }[] }).selected.map((t) => t.source),
      ["BIN-BI-TOPIC", "PUSH-BI-TOPIC", "USER-BI-TOPIC"],
    );
    const again = testbed(["up", "--dir", dir]);
    assert.equal(await again.exited, 1);
    assert.match(again.output(), /already up \(pid \d+\)/);

    const down = testbed(["down", "--dir", dir]);
    assert.equal(await down.exited, 0, down.output());
    assert.match(down.output(), /testbed: stopped \(pid \d+\)/);
    assert.equal(await up.exited, 0, up.output());
    assert.match(up.output(), /testbed: stopped both clusters/);

    const gone = await spawnCli(["plan", "--config", config], { killAfterMs: 60_000 });
    assert.equal(gone.code, 3, "the clusters are gone");
  });

  it("up stops on Ctrl-C (SIGINT), and down then finds nothing to stop", async () => {
    const up = testbed(["up", "--dir", dir, "--brokers", "1"]);
    ups.push(up);
    await configOf(up);

    up.child.kill("SIGINT");

    assert.equal(await up.exited, 0, up.output());
    const down = testbed(["down", "--dir", dir]);
    assert.equal(await down.exited, 0);
    assert.match(down.output(), /testbed: none is up/);
  });
});
