import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseConfig } from "../../../../lib/config/schema.js";
import { isReplicatorError } from "../../../../lib/errors.js";
import { kafkaSecurityOptions } from "../../../../lib/kafka/wire/security.js";

const SECRET = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:kafka-mirror/source-AbCdEf";

function problemsOf(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    assert.ok(isReplicatorError(error, "CONFIG_INVALID"), String(error));
    return error.details.problems as string[];
  }
  assert.fail("expected CONFIG_INVALID");
}

describe("kafkaSecurityOptions", () => {
  it("leaves a plaintext cluster without ssl and sasl", () => {
    assert.deepEqual(kafkaSecurityOptions({ tls: false, saslMechanism: "none" }), {});
  });

  it("verifies certificates with the system CAs when no CA is given", () => {
    const { ssl, sasl } = kafkaSecurityOptions({ tls: true, saslMechanism: "none" });
    assert.deepEqual(ssl, { rejectUnauthorized: true });
    assert.equal(sasl, undefined);
  });

  it("passes a private CA and a client certificate for mutual TLS", () => {
    const { ssl } = kafkaSecurityOptions({
      tls: true,
      saslMechanism: "none",
      credentials: { ca: "CA-PEM", cert: "CERT-PEM", key: "KEY-PEM" },
      serverName: "b-1.example",
    });
    assert.deepEqual(ssl, {
      rejectUnauthorized: true,
      ca: ["CA-PEM"],
      cert: "CERT-PEM",
      key: "KEY-PEM",
      servername: "b-1.example",
    });
  });

  for (const mechanism of ["plain", "scram-sha-256", "scram-sha-512"] as const) {
    it(`maps ${mechanism} to kafkajs's mechanism with the secret's username and password`, () => {
      const { sasl, ssl } = kafkaSecurityOptions({
        tls: true,
        saslMechanism: mechanism,
        credentials: { username: "mirror", password: "s3cret" },
      });
      assert.deepEqual(sasl, { mechanism, username: "mirror", password: "s3cret" });
      assert.deepEqual(ssl, { rejectUnauthorized: true });
    });
  }

  it("signs an MSK IAM token for the configured region on every authentication", async () => {
    const regions: string[] = [];
    let n = 0;
    const { sasl } = kafkaSecurityOptions(
      { tls: true, saslMechanism: "aws-msk-iam", region: "eu-central-1" },
      async (region) => {
        regions.push(region);
        n++;
        return { token: `token-${n}`, expiryTime: 0 };
      },
    );
    assert.equal(sasl?.mechanism, "oauthbearer");
    assert.ok(sasl !== undefined && sasl.mechanism === "oauthbearer");
    assert.deepEqual(await sasl.oauthBearerProvider(), { value: "token-1" });
    assert.deepEqual(await sasl.oauthBearerProvider(), { value: "token-2" });
    assert.deepEqual(regions, ["eu-central-1", "eu-central-1"]);
  });

  it("lists every problem at once and never a credential's value", () => {
    const problems = problemsOf(() =>
      kafkaSecurityOptions({
        tls: false,
        saslMechanism: "scram-sha-512",
        credentials: { password: "do-not-print", ca: "CA-PEM" },
      }),
    );
    assert.deepEqual(problems, [
      "the secret holds TLS material (ca, cert or key) but tls is off",
      'saslMechanism scram-sha-512 needs "username" in the secret',
    ]);
    assert.ok(!JSON.stringify(problems).includes("do-not-print"));
  });

  it("refuses half a client certificate and IAM without TLS or region", () => {
    assert.deepEqual(
      problemsOf(() =>
        kafkaSecurityOptions({ tls: true, saslMechanism: "none", credentials: { cert: "C" } }),
      ),
      ["mutual TLS needs both cert and key in the secret"],
    );
    assert.deepEqual(
      problemsOf(() => kafkaSecurityOptions({ tls: false, saslMechanism: "aws-msk-iam" })),
      ["saslMechanism aws-msk-iam needs tls", "saslMechanism aws-msk-iam needs a region to sign tokens for"],
    );
  });
});

describe("config: cluster security settings", () => {
  const base = { target: { brokers: "t:9092" }, topics: { whitelist: "A" } };

  it("accepts SCRAM with a secret ARN and leaves SASL unset by default", () => {
    const config = parseConfig({
      ...base,
      source: { brokers: "s:9096", tls: "true", saslMechanism: "scram-sha-512", secretArn: SECRET },
    });
    assert.equal(config.source.saslMechanism, "scram-sha-512");
    assert.equal(config.source.secretArn, SECRET);
    assert.equal(config.target.saslMechanism, undefined);
    assert.equal(config.target.secretArn, undefined);
  });

  // PLAIN/SCRAM without secretArn is valid config since the CLI takes passwords from variables or
  // a file; the functions still require secretArn (test/unit/functions/runtime.test.ts).
  it("requires TLS for MSK IAM and for TLS files, and cert with key, naming the fields", () => {
    assert.throws(
      () =>
        parseConfig({
          source: { brokers: "s:9096", saslMechanism: "plain", tlsCaFile: "ca.pem", tlsCertFile: "c.pem" },
          target: { brokers: "t:9098", saslMechanism: "aws-msk-iam" },
          topics: { whitelist: "A" },
        }),
      (error) => {
        assert.ok(isReplicatorError(error, "CONFIG_INVALID"));
        const paths = (error.details.issues as { path: string }[]).map((i) => i.path);
        assert.deepEqual(paths.sort(), [
          "source.tlsCaFile",
          "source.tlsCertFile",
          "source.tlsKeyFile",
          "target.tls",
        ]);
        return true;
      },
    );
  });

  it("refuses something that is not a Secrets Manager ARN", () => {
    assert.throws(
      () => parseConfig({ ...base, source: { brokers: "s:1", secretArn: "my-password" } }),
      /source\.secretArn: expected a Secrets Manager secret ARN/,
    );
  });
});
