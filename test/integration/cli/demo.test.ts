/**
 * `kafka-mirror demo`, as the README's first Quickstart command runs it (after the test bed is
 * built): it reaches its summary line with verify passing, exits 0, and leaves nothing running.
 * On the broker KAFKA_TESTBED names (`demo --kafka real` on real Apache Kafka).
 */
import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { spawnCli } from "../../helpers/cli.js";
import { KAFKA_TESTBED } from "../../helpers/kafka-testbed.js";

/** Command lines of running lease servers whose state directory is under `dir`. */
async function leaseServersUnder(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const pid of (await readdir("/proc")).filter((name) => /^\d+$/.test(name))) {
    const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
    if (cmdline.includes("daemon.ts") && cmdline.includes(dir)) found.push(cmdline);
  }
  return found;
}

describe(`kafka-mirror demo --kafka ${KAFKA_TESTBED}`, () => {
  it("runs to its summary line with verify OK, exits 0 and cleans up", async () => {
    // A temporary directory of its own, so other demos running on the machine do not count.
    const tmp = await mkdtemp(join(tmpdir(), "kafka-mirror-demo-test-"));
    const { code, stdout, stderr } = await spawnCli(["demo", "--kafka", KAFKA_TESTBED], {
      env: { ...process.env, TMPDIR: tmp },
    });
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
    try {
      // tsx keeps its cache there too; only the demo's own directory must be gone.
      assert.deepEqual(
        (await readdir(tmp)).filter((name) => name.startsWith("kafka-mirror-demo-")),
        [],
      );
      assert.deepEqual(await leaseServersUnder(tmp), []);
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  });
});
