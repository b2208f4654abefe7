/**
 * `kafka-mirror demo`, as the README's first Quickstart command runs it (after the test bed is
 * built): it reaches its summary line with verify passing, exits 0, and leaves nothing running.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const BIN = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "bin", "kafka-mirror.js");

/** Command lines of running processes that serve a demo's state directory. */
async function demoLeaseServers(): Promise<string[]> {
  const found: string[] = [];
  for (const pid of (await readdir("/proc")).filter((name) => /^\d+$/.test(name))) {
    const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
    if (cmdline.includes("daemon.ts") && cmdline.includes("kafka-mirror-demo-")) found.push(cmdline);
  }
  return found;
}

async function demoStateDirs(): Promise<string[]> {
  return (await readdir(tmpdir())).filter((name) => name.startsWith("kafka-mirror-demo-"));
}

describe("kafka-mirror demo", () => {
  it("runs to its summary line with verify OK, exits 0 and cleans up", async () => {
    const before = new Set(await demoStateDirs());
    const serversBefore = new Set(await demoLeaseServers());
    const child = spawn(process.execPath, [BIN, "demo"], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString("utf8");
    });
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString("utf8");
    });
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    assert.equal(code, 0, `stdout:\n${stdout}\nstderr:\n${stderr}`);

    const lines = stdout.trimEnd().split("\n");
    const summary = lines.at(-1) ?? "";
    assert.match(
      summary,
      /^kafka-mirror demo: 60,000 records, 3 topics, 24 partitions mirrored in [\d.]+ s by 3 workers; verify OK: .*SCRIPT-BI-TOPIC not copied; total [\d.]+ s$/,
    );
    // Not a terminal: plain progress lines, no cursor movement.
    assert.equal(stdout.includes("\u001b["), false);
    assert.match(stdout, /records copied, lag/);

    // Its state directory is gone, so is the lease server it started.
    const after = (await demoStateDirs()).filter((d) => !before.has(d));
    assert.deepEqual(after, []);
    assert.deepEqual(
      (await demoLeaseServers()).filter((c) => !serversBefore.has(c)),
      [],
    );
  });
});
