/**
 * SecretCache and credential parsing with the real Secrets Manager client, pointed at a local
 * HTTP endpoint that answers GetSecretValue the way the service does (JSON protocol).
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { after, before, describe, it } from "node:test";
import { SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import { isReplicatorError } from "../../../lib/errors.js";
import { parseClusterCredentials } from "../../../lib/secrets/cluster-credentials.js";
import { SecretCache } from "../../../lib/secrets/secret-cache.js";

const ARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:kafka-mirror/source-AbCdEf";
const MISSING = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:missing-AbCdEf";
const BROKEN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:broken-AbCdEf";

describe("SecretCache against a local Secrets Manager endpoint", () => {
  let server: Server;
  let endpoint: string;
  const requests: string[] = [];
  let secretString = JSON.stringify({ username: "mirror", password: "p@ss-1" });

  before(async () => {
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => {
        body += chunk.toString("utf8");
      });
      req.on("end", () => {
        const { SecretId } = JSON.parse(body) as { SecretId: string };
        requests.push(SecretId);
        res.setHeader("content-type", "application/x-amz-json-1.1");
        if (SecretId === MISSING) {
          res.statusCode = 400;
          res.end(JSON.stringify({ __type: "ResourceNotFoundException", message: "not found" }));
          return;
        }
        const value = SecretId === BROKEN ? "password=hunter2" : secretString;
        res.end(JSON.stringify({ ARN: SecretId, Name: "x", SecretString: value }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    assert.ok(typeof address === "object" && address !== null);
    endpoint = `http://127.0.0.1:${address.port}`;
  });

  after(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  function client(): SecretsManagerClient {
    return new SecretsManagerClient({
      endpoint,
      region: "eu-west-1",
      credentials: { accessKeyId: "local", secretAccessKey: "local" },
      maxAttempts: 1,
    });
  }

  it("reads a secret once per TTL and again after it", async () => {
    let now = 0;
    const sm = client();
    const cache = new SecretCache({ client: sm, ttlMs: 1_000, now: () => now });
    try {
      requests.length = 0;
      assert.deepEqual(await cache.json(ARN), { username: "mirror", password: "p@ss-1" });
      now = 999;
      secretString = JSON.stringify({ username: "mirror", password: "p@ss-2" });
      assert.deepEqual(await cache.json(ARN), { username: "mirror", password: "p@ss-1" });
      now = 1_000;
      assert.deepEqual(await cache.json(ARN), { username: "mirror", password: "p@ss-2" });
      assert.deepEqual(requests, [ARN, ARN]);
    } finally {
      sm.destroy();
    }
  });

  it("names the secret, never its value, when it cannot be read or is not JSON", async () => {
    const sm = client();
    const cache = new SecretCache({ client: sm });
    try {
      await assert.rejects(cache.json(MISSING), (error) => {
        assert.ok(isReplicatorError(error, "CONFIG_INVALID"));
        assert.match(error.message, /reading secret .*missing-AbCdEf failed: ResourceNotFoundException/);
        return true;
      });
      await assert.rejects(cache.json(BROKEN), (error) => {
        assert.ok(isReplicatorError(error, "CONFIG_INVALID"));
        assert.ok(!JSON.stringify({ m: error.message, d: error.details }).includes("hunter2"));
        return true;
      });
      // A failure is not cached: the next call asks again.
      requests.length = 0;
      await assert.rejects(cache.json(MISSING));
      assert.deepEqual(requests, [MISSING]);
    } finally {
      sm.destroy();
    }
  });
});

describe("parseClusterCredentials", () => {
  it("keeps the known string fields", () => {
    assert.deepEqual(parseClusterCredentials({ username: "u", password: "p", ca: "PEM" }, ARN), {
      username: "u",
      password: "p",
      ca: "PEM",
    });
  });

  it("lists unknown keys and non-string values without their values", () => {
    assert.throws(
      () => parseClusterCredentials({ user: "u", password: 42, key: "" }, ARN),
      (error) => {
        assert.ok(isReplicatorError(error, "CONFIG_INVALID"));
        assert.deepEqual(error.details.problems, [
          'unknown key "user"; allowed: username, password, ca, cert, key',
          '"password" must be a non-empty string',
          '"key" must be a non-empty string',
        ]);
        assert.ok(!error.message.includes("42"));
        return true;
      },
    );
  });
});
