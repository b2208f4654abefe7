/**
 * The MSK IAM token our signer path produces (lib/kafka/wire/security.ts with its default provider,
 * aws-msk-iam-sasl-signer-js over the default AWS credential chain) has the documented shape:
 * the base64url of a SigV4-presigned URL for `kafka-cluster:Connect` on
 * `kafka.<region>.amazonaws.com`. Fixed fake credentials come from the environment, so nothing
 * leaves the machine; whether AWS accepts the token is not tested here (see TESTING.md).
 */
import assert from "node:assert/strict";
import { createHash, createHmac } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { kafkaSecurityOptions } from "../../../../lib/kafka/wire/security.js";

const REGION = "eu-west-1";
const FAKE = {
  AWS_ACCESS_KEY_ID: "AKIAIOSFODNN7EXAMPLE",
  AWS_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  AWS_SESSION_TOKEN: "FAKE/session+token=",
} as const;

async function signedToken(): Promise<string> {
  const { sasl } = kafkaSecurityOptions({ tls: true, saslMechanism: "aws-msk-iam", region: REGION });
  assert.ok(sasl !== undefined && sasl.mechanism === "oauthbearer");
  return (await sasl.oauthBearerProvider()).value;
}

const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex");
const hmac = (key: string | Buffer, text: string): Buffer => createHmac("sha256", key).update(text).digest();
/** RFC 3986 encoding, as SigV4 canonical query strings use it. */
const encode = (text: string): string =>
  encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** SigV4 query signature, recomputed from the URL and the secret key (AWS's documented steps). */
function expectedSignature(url: URL, secretKey: string): string {
  const signed = [...url.searchParams]
    // The signature itself, and the User-Agent the signer appends after signing.
    .filter(([name]) => name !== "X-Amz-Signature" && name !== "User-Agent")
    .map(([name, value]) => `${encode(name)}=${encode(value)}`)
    .sort();
  const canonical = ["GET", "/", signed.join("&"), `host:${url.host}\n`, "host", sha256("")].join("\n");
  const [, day, region, service, terminal] = (url.searchParams.get("X-Amz-Credential") ?? "").split("/");
  const scope = [day, region, service, terminal].join("/");
  const toSign = ["AWS4-HMAC-SHA256", url.searchParams.get("X-Amz-Date"), scope, sha256(canonical)].join(
    "\n",
  );
  let key = hmac(`AWS4${secretKey}`, day ?? "");
  for (const part of [region ?? "", service ?? "", "aws4_request"]) key = hmac(key, part);
  return createHmac("sha256", key).update(toSign).digest("hex");
}

describe("MSK IAM token from the signer", () => {
  const saved: Record<string, string | undefined> = {};

  before(() => {
    for (const [name, value] of Object.entries(FAKE)) {
      saved[name] = process.env[name];
      process.env[name] = value;
    }
  });

  after(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it("is base64url (no padding, URL-safe alphabet) of an https URL", async () => {
    const token = await signedToken();

    assert.match(token, /^[A-Za-z0-9_-]+$/);
    assert.match(Buffer.from(token, "base64url").toString("utf8"), /^https:\/\//);
  });

  it("is a presigned kafka-cluster:Connect URL for kafka.<region>.amazonaws.com", async () => {
    const text = Buffer.from(await signedToken(), "base64url").toString("utf8");
    const url = new URL(text);
    const param = (name: string): string | null => url.searchParams.get(name);

    assert.equal(url.origin, `https://kafka.${REGION}.amazonaws.com`);
    assert.equal(url.pathname, "/");
    assert.match(text, /\?Action=kafka-cluster%3AConnect&/);
    assert.equal(param("X-Amz-Algorithm"), "AWS4-HMAC-SHA256");
    assert.match(
      param("X-Amz-Credential") ?? "",
      new RegExp(`^${FAKE.AWS_ACCESS_KEY_ID}/\\d{8}/${REGION}/kafka-cluster/aws4_request$`),
    );
    assert.match(param("X-Amz-Date") ?? "", /^\d{8}T\d{6}Z$/);
    assert.equal(param("X-Amz-Credential")?.split("/")[1], param("X-Amz-Date")?.slice(0, 8));
    assert.match(param("X-Amz-Expires") ?? "", /^[1-9]\d*$/);
    assert.ok(Number(param("X-Amz-Expires")) <= 900, "MSK accepts tokens valid for at most 15 minutes");
    assert.equal(param("X-Amz-SignedHeaders"), "host");
    assert.equal(param("X-Amz-Security-Token"), FAKE.AWS_SESSION_TOKEN);
    assert.match(param("X-Amz-Signature") ?? "", /^[0-9a-f]{64}$/);
    assert.match(param("User-Agent") ?? "", /^aws-msk-iam-sasl-signer-js\//);
  });

  it("carries the SigV4 signature of its own parameters under the credentials it names", async () => {
    const url = new URL(Buffer.from(await signedToken(), "base64url").toString("utf8"));

    assert.equal(url.searchParams.get("X-Amz-Signature"), expectedSignature(url, FAKE.AWS_SECRET_ACCESS_KEY));
    assert.notEqual(url.searchParams.get("X-Amz-Signature"), expectedSignature(url, "another-secret"));
  });
});
