/**
 * Each bad input to the real `kafka-mirror` process: one message naming the problem, a non-zero
 * exit code, and no stack trace unless --debug.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type SpawnedCliResult, spawnCli } from "../../helpers/cli.js";

function cli(args: readonly string[], cwd: string): Promise<SpawnedCliResult> {
  return spawnCli(args, { cwd });
}

/** A loopback port that refuses connections: bound, then closed. */
async function refusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const address = server.address();
  await new Promise<void>((r) => server.close(() => r()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

const STACK_LINE = /\n\s+at .+:\d+:\d+/;

describe("kafka-mirror on bad input", () => {
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "kafka-mirror-cli-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const write = async (name: string, text: string): Promise<string> => {
    const path = join(dir, name);
    await writeFile(path, text);
    return path;
  };

  /** Asserts the exit code, that stderr is exactly one message matching `message`, and no stack. */
  const expectFailure = (result: SpawnedCliResult, code: number, message: RegExp): void => {
    assert.equal(result.code, code, `exit code; stderr: ${result.stderr}`);
    assert.match(result.stderr, message);
    assert.ok(result.stderr.startsWith("kafka-mirror: "), result.stderr);
    assert.doesNotMatch(result.stderr, STACK_LINE);
  };

  it("names a config file that does not exist", async () => {
    const missing = join(dir, "nope.yaml");
    expectFailure(
      await cli(["status", "--config", missing], dir),
      2,
      /cannot read config file .*nope\.yaml: not found/,
    );
  });

  it("names a config path it cannot read", async () => {
    const folder = join(dir, "a-folder.yaml");
    await mkdir(folder, { recursive: true });
    expectFailure(
      await cli(["plan", "--config", folder], dir),
      2,
      /cannot read config file .*a-folder\.yaml: is a directory/,
    );
  });

  it("names invalid YAML with its line", async () => {
    const path = await write("broken.yaml", "source:\n  brokers: [a:1\ntarget: {}\n");
    expectFailure(
      await cli(["verify", "--config", path], dir),
      2,
      /invalid YAML in .*broken\.yaml at line \d+, column \d+: /,
    );
  });

  it("names invalid JSON", async () => {
    const path = await write("broken.json", '{"source": ');
    expectFailure(await cli(["plan", "--config", path], dir), 2, /invalid JSON in .*broken\.json: /);
  });

  it("names each unknown key by its path", async () => {
    const path = await write(
      "unknown.yaml",
      "source:\n  brokers: a:1\n  brokerz: b:1\ntarget:\n  brokers: c:1\ntopcs:\n  whitelist: X\n",
    );
    const result = await cli(["run", "--once", "--config", path], dir);
    expectFailure(result, 2, /invalid config in .*unknown\.yaml:\n {2}source\.brokerz: unknown key/);
    assert.match(result.stderr, /\n {2}topcs: unknown key/);
  });

  it("names an invalid regular expression and the field", async () => {
    const path = await write(
      "regex.yaml",
      'source:\n  brokers: a:1\ntarget:\n  brokers: c:1\ntopics:\n  whitelist: "BIN-(BI|PUSH"\n',
    );
    expectFailure(
      await cli(["plan", "--config", path], dir),
      2,
      /topics\.whitelist: invalid regular expression "BIN-\(BI\|PUSH"/,
    );
  });

  it("names an unreachable broker with its address and the timeout", async () => {
    const port = await refusedPort();
    const path = await write(
      "unreachable.yaml",
      `source:\n  brokers: 127.0.0.1:${port}\n  connectionTimeoutMs: 1500\ntarget:\n  brokers: 127.0.0.1:${port}\ntopics:\n  whitelist: X\n`,
    );
    const result = await cli(["status", "--config", path, "--state-dir", join(dir, "state")], dir);
    expectFailure(
      result,
      3,
      new RegExp(
        `cannot reach the source cluster at 127\\.0\\.0\\.1:${port} after \\d+\\.\\d s and \\d+ attempts? ` +
          "\\(source\\.connectionTimeoutMs 1500 ms per connection attempt; the check gives up after 31500 ms",
      ),
    );
    assert.doesNotMatch(result.stderr, /\[error\]/, "kafkajs's own connection errors stay quiet");
  });

  it("shows the stack trace with --debug", async () => {
    const result = await cli(["status", "--config", join(dir, "nope.yaml"), "--debug"], dir);
    assert.equal(result.code, 2);
    assert.match(result.stderr, STACK_LINE);
  });

  it("refuses an unknown command or option with the usage", async () => {
    const result = await cli(["mirror-all"], dir);
    expectFailure(result, 2, /unknown command "mirror-all"\nusage: kafka-mirror/);
    expectFailure(
      await cli(["verify", "--config", "x.yaml", "--from-offset", "-3"], dir),
      2,
      /--from-offset|Option/,
    );
  });

  it("refuses failover without --group, and a bad --group pattern before connecting", async () => {
    expectFailure(await cli(["failover", "--config", "x.yaml"], dir), 2, /failover needs --group G/);
    expectFailure(
      await cli(["offsets", "--config", "x.yaml", "--group", "(a)\\1"], dir),
      2,
      /--group: invalid regular expression "\(a\)\\1"/,
    );
  });
});
