/**
 * The real `kafka-mirror` process with TLS and SASL settings: credentials from variables or a
 * file, TLS files read at connect time, and a refused login reported as one line naming the side
 * and the mechanism, exit 3, with the password in no output (--debug included).
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type SpawnedCliResult, spawnCli } from "../../helpers/cli.js";
import { type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";
import { type SaslRefusingBroker, startSaslRefusingBroker } from "../../helpers/sasl-refusing-broker.js";

const PASSWORD = `pw-${process.pid}-never-printed`;
const STACK_LINE = /\n\s+at .+:\d+:\d+/;

describe("kafka-mirror with TLS and SASL settings", () => {
  let dir: string;
  let refusing: SaslRefusingBroker;
  let plain: MockKafka;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "kafka-mirror-cli-sec-"));
    [refusing, plain] = await Promise.all([startSaslRefusingBroker(), startMockKafka({ brokers: 1 })]);
  });
  after(async () => {
    await Promise.allSettled([refusing?.close(), plain?.stop()]);
    await rm(dir, { recursive: true, force: true });
  });

  const config = async (name: string, source: object, target: object = { brokers: "127.0.0.1:1" }) => {
    const path = join(dir, name);
    await writeFile(path, JSON.stringify({ source, target, topics: { whitelist: ".*" } }));
    return path;
  };
  const plan = (path: string, env: NodeJS.ProcessEnv = {}, debug = false): Promise<SpawnedCliResult> =>
    spawnCli(["plan", "--config", path, ...(debug ? ["--debug"] : [])], {
      cwd: dir,
      env: { PATH: process.env.PATH, HOME: dir, ...env },
    });
  const assertNoPassword = (result: SpawnedCliResult) => {
    assert.ok(!result.stdout.includes(PASSWORD), "password in stdout");
    assert.ok(!result.stderr.includes(PASSWORD), "password in stderr");
  };
  const expectOneLine = (result: SpawnedCliResult, code: number, message: RegExp) => {
    assert.equal(result.code, code, `exit code; stderr: ${result.stderr}`);
    assert.match(result.stderr, message);
    assert.equal(result.stderr.trim().split("\n").length, 1, result.stderr);
    assert.doesNotMatch(result.stderr, STACK_LINE);
  };

  it("reports refused PLAIN credentials from the variables as one line naming the side, exit 3", async () => {
    const path = await config("plain.json", { brokers: refusing.address, saslMechanism: "plain" });
    const before = refusing.refusals;
    const result = await plan(path, {
      KAFKA_MIRROR_SOURCE_USERNAME: "alice",
      KAFKA_MIRROR_SOURCE_PASSWORD: PASSWORD,
    });
    expectOneLine(
      result,
      3,
      /^kafka-mirror: authentication to the source cluster .* failed \(source\.saslMechanism plain\)/,
    );
    assert.ok(refusing.refusals > before, "the broker was asked to authenticate");
    assertNoPassword(result);
  });

  it("keeps the password out of --debug output too", async () => {
    const path = await config("plain-debug.json", { brokers: refusing.address, saslMechanism: "plain" });
    const result = await plan(
      path,
      { KAFKA_MIRROR_SOURCE_USERNAME: "alice", KAFKA_MIRROR_SOURCE_PASSWORD: PASSWORD },
      true,
    );
    assert.equal(result.code, 3, result.stderr);
    assertNoPassword(result);
  });

  it("reads SCRAM credentials from credentialsFile and names the target side when it refuses", async () => {
    const credentials = join(dir, "target-credentials.json");
    await writeFile(credentials, JSON.stringify({ username: "bob", password: PASSWORD }));
    const path = await config(
      "scram.json",
      { brokers: plain.bootstrapServers.join(",") },
      { brokers: refusing.address, saslMechanism: "scram-sha-512", credentialsFile: credentials },
    );
    const result = await plan(path);
    expectOneLine(
      result,
      3,
      /^kafka-mirror: authentication to the target cluster .* failed \(target\.saslMechanism scram-sha-512\)/,
    );
    assertNoPassword(result);
  });

  it("names a TLS file that cannot be read, and the field it came from", async () => {
    const missing = join(dir, "no-such-ca.pem");
    const path = await config("tls.json", { brokers: refusing.address, tls: true, tlsCaFile: missing });
    expectOneLine(await plan(path), 2, /cannot read source\.tlsCaFile .*no-such-ca\.pem: not found/);
  });

  it("refuses half a pair of credential variables, and a mechanism with no credentials at all", async () => {
    const path = await config("half.json", { brokers: refusing.address, saslMechanism: "scram-sha-256" });
    expectOneLine(
      await plan(path, { KAFKA_MIRROR_SOURCE_USERNAME: "alice" }),
      2,
      /KAFKA_MIRROR_SOURCE_PASSWORD is unset or empty/,
    );
    expectOneLine(
      await plan(path),
      2,
      /source\.saslMechanism scram-sha-256 needs a username and password: set KAFKA_MIRROR_SOURCE_USERNAME/,
    );
  });

  it("refuses a credentials file that is not JSON without quoting it", async () => {
    const credentials = join(dir, "bad-credentials.json");
    await writeFile(credentials, `username=alice password=${PASSWORD}`);
    const path = await config("bad-file.json", {
      brokers: refusing.address,
      saslMechanism: "plain",
      credentialsFile: credentials,
    });
    const result = await plan(path);
    expectOneLine(result, 2, /source\.credentialsFile .*bad-credentials\.json is not valid JSON/);
    assertNoPassword(result);
  });
});
