/** One side's TLS and SASL options from its config: files, variables, credentials file, secret. */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { SASLOptions } from "kafkajs";
import { parseConfig } from "../../../lib/config/schema.js";
import { isReplicatorError } from "../../../lib/errors.js";
import { clusterSecurityOptions } from "../../../lib/secrets/cluster-security.js";
import { RotatingSecrets } from "../../helpers/rotating-secrets.js";

const SECRET = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:source-kafka";

function source(fields: Record<string, unknown>) {
  return parseConfig({
    source: { brokers: "s:9096", ...fields },
    target: { brokers: "t:1" },
    topics: { whitelist: ".*" },
  }).source;
}

function userAndPassword(sasl: SASLOptions | undefined): [string, string] {
  assert.ok(sasl !== undefined && "password" in sasl && "username" in sasl, "SASL with a password");
  return [sasl.username, sasl.password];
}

describe("clusterSecurityOptions", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "kafka-mirror-security-"));
    await writeFile(join(dir, "ca.pem"), "CA PEM");
    await writeFile(join(dir, "cert.pem"), "CERT PEM");
    await writeFile(join(dir, "key.pem"), "KEY PEM");
    await writeFile(join(dir, "creds.json"), JSON.stringify({ username: "file-user", password: "file-pw" }));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it("reads the CA, certificate and key files into verified TLS options", async () => {
    const options = await clusterSecurityOptions(
      source({
        tls: true,
        tlsCaFile: join(dir, "ca.pem"),
        tlsCertFile: join(dir, "cert.pem"),
        tlsKeyFile: join(dir, "key.pem"),
      }),
      "source",
    );
    assert.deepEqual(options.ssl, {
      rejectUnauthorized: true,
      ca: ["CA PEM"],
      cert: "CERT PEM",
      key: "KEY PEM",
    });
  });

  it("takes the variables first, then the credentials file, then the secret", async () => {
    const secrets = new RotatingSecrets({ username: "secret-user", password: "secret-pw" });
    const cluster = source({
      saslMechanism: "scram-sha-256",
      credentialsFile: join(dir, "creds.json"),
      secretArn: SECRET,
    });
    const env = { KAFKA_MIRROR_SOURCE_USERNAME: "env-user", KAFKA_MIRROR_SOURCE_PASSWORD: "env-pw" };
    const sasl = async (c: typeof cluster, e = {}) =>
      userAndPassword((await clusterSecurityOptions(c, "source", { env: e, secrets })).sasl);

    assert.deepEqual(await sasl(cluster, env), ["env-user", "env-pw"]);
    assert.deepEqual(await sasl(cluster), ["file-user", "file-pw"]);
    assert.deepEqual(await sasl(source({ saslMechanism: "plain", secretArn: SECRET })), [
      "secret-user",
      "secret-pw",
    ]);
    // The target's variables are not the source's.
    const targetEnv = { KAFKA_MIRROR_TARGET_USERNAME: "t", KAFKA_MIRROR_TARGET_PASSWORD: "t" };
    assert.deepEqual(await sasl(cluster, targetEnv), ["file-user", "file-pw"]);
  });

  it("reads the secret past the cache only when asked to", async () => {
    const secrets = new RotatingSecrets(
      { username: "u", password: "old" },
      { username: "u", password: "new" },
    );
    const cluster = source({ saslMechanism: "plain", secretArn: SECRET });
    const read = async (fresh: boolean) =>
      userAndPassword((await clusterSecurityOptions(cluster, "source", { secrets, fresh })).sasl)[1];
    assert.equal(await read(false), "old");
    assert.equal(await read(true), "new");
    assert.deepEqual(secrets.reads, [{ fresh: false }, { fresh: true }]);
  });

  it("names the field and path of a file it cannot read, never a credential", async () => {
    await assert.rejects(
      clusterSecurityOptions(
        source({ tls: true, tlsKeyFile: dir, tlsCertFile: join(dir, "cert.pem") }),
        "source",
      ),
      (error) =>
        isReplicatorError(error, "CONFIG_INVALID") &&
        error.message === `cannot read source.tlsKeyFile ${dir}: is a directory, not a file`,
    );
    await writeFile(join(dir, "bad.json"), JSON.stringify({ username: "u", password: "s3cret", token: "x" }));
    await assert.rejects(
      clusterSecurityOptions(
        source({ saslMechanism: "plain", credentialsFile: join(dir, "bad.json") }),
        "source",
      ),
      (error) =>
        isReplicatorError(error, "CONFIG_INVALID") &&
        /source\.credentialsFile .*bad\.json: unknown key "token"/.test(error.message) &&
        !error.message.includes("s3cret"),
    );
  });

  it("signs MSK IAM tokens for the given region with the injected signer", async () => {
    const options = await clusterSecurityOptions(
      source({ tls: true, saslMechanism: "aws-msk-iam" }),
      "source",
      {
        region: "eu-west-1",
        iamTokenProvider: async (region) => ({ token: `token-for-${region}`, expiryTime: 0 }),
      },
    );
    assert.equal(options.sasl?.mechanism, "oauthbearer");
    const provider = options.sasl?.mechanism === "oauthbearer" ? options.sasl.oauthBearerProvider : undefined;
    assert.deepEqual(await provider?.(), { value: "token-for-eu-west-1" });
  });
});
