/**
 * The replicate bundle `cdk synth` produces copies a topic end to end through each security
 * front, on both sides: TLS on every connection with mutual TLS (CA, client certificate and key
 * from the cluster's secret), and the SASL proxy with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512
 * (username and password from the secret). Secrets come from a local GetSecretValue endpoint
 * through the real SDK (AWS_ENDPOINT_URL_SECRETS_MANAGER). Source data is written, and both sides
 * are read back, with kcat through the same fronts. Brokers are reached only at the addresses
 * the fronts advertise, so TLS_EVERY_CONNECTION_BROKEN=1 / SASL_PROXY_BROKEN=1 (once the source
 * data is written, the fronts leak the brokers' plaintext listeners) make the copy fail.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { createDynamoDbClient } from "../../../lib/dynamodb/client.js";
import { createLeaseTable } from "../../../lib/dynamodb/lease-table.js";
import { type DynamoDbLocal, startDynamoDbLocal } from "../../helpers/dynamodb-local.js";
import { kcatProduce, kcatRead } from "../../helpers/kcat.js";
import {
  bundleEnvironment,
  invokeBundle,
  localInvocationVariables,
  plaintextStackParameters,
  type SynthesizedBundles,
  synthesizeBundles,
} from "../../helpers/lambda-bundles.js";
import { type LocalSecretsManager, startLocalSecretsManager } from "../../helpers/secrets-manager-local.js";
import {
  FRONT_KINDS,
  type FrontKind,
  leakRequested,
  type SecuredCluster,
  startSecuredCluster,
} from "../../helpers/secured-clusters.js";
import { makeTestPki, type TestPki } from "../../helpers/tls-certs.js";

const REGION = "eu-west-1";
const BROKERS = 2;
const PARTITIONS = 4;
const PER_PARTITION = 150;
const USER = "mirror-fn";
const PASSWORD = "fn-pass,=1";

describe("the replicate bundle through secured clusters", () => {
  let bundles: SynthesizedBundles;
  let dynamo: DynamoDbLocal;
  let secrets: LocalSecretsManager;
  let pki: TestPki;

  before(async () => {
    pki = makeTestPki();
    [bundles, dynamo, secrets] = await Promise.all([
      synthesizeBundles(REGION),
      startDynamoDbLocal(),
      startLocalSecretsManager(),
    ]);
  });

  after(async () => {
    await Promise.all([dynamo?.stop(), secrets?.stop()]);
    bundles?.remove();
    pki?.remove();
  });

  async function createTable(table: string): Promise<void> {
    const client = createDynamoDbClient({
      endpoint: dynamo.endpoint,
      region: REGION,
      credentials: { accessKeyId: "local", secretAccessKey: "local" },
      requestTimeoutMs: 5_000,
    });
    await createLeaseTable(client, table);
    client.destroy();
  }

  /** Stores both sides' secrets and maps the template's parameters onto the fronts. */
  function replicateEnvironment(
    kind: FrontKind,
    clusters: { source: SecuredCluster; target: SecuredCluster },
    table: string,
    arn: (side: string) => string,
  ): Record<string, string> {
    const secret: Record<string, string> =
      kind === "mtls"
        ? { ca: pki.ca.pem, cert: pki.clientCert.pem, key: pki.clientKey.pem }
        : { username: USER, password: PASSWORD };
    secrets.setSecret(arn("source"), secret);
    secrets.setSecret(arn("target"), secret);
    const side = (name: "Source" | "Target", cluster: SecuredCluster): Record<string, string> => ({
      [`${name}BootstrapServers`]: cluster.bootstrapServers.join(","),
      [`${name}Tls`]: kind === "mtls" ? "true" : "false",
      [`${name}SaslMechanism`]: kind === "mtls" ? "none" : kind,
      [`${name}SecretArn`]: arn(name.toLowerCase()),
    });
    const plain = { source: clusters.source.bootstrapServers, target: clusters.target.bootstrapServers };
    const parameters = {
      ...plaintextStackParameters(plain, `SECURED-${kind.toUpperCase()}-${process.pid}`),
      ...side("Source", clusters.source),
      ...side("Target", clusters.target),
    };
    return {
      ...bundleEnvironment(bundles.replicate, parameters, table),
      ...localInvocationVariables(dynamo.endpoint, REGION),
      // Longer than the plaintext tests' (connections go through stunnel or the SASL proxy).
      KAFKA_MIRROR_TARGET_REQUEST_TIMEOUT_MS: "3000",
      KAFKA_MIRROR_LEASES_DURATION_MS: "10000",
      AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.endpoint,
    };
  }

  for (const kind of FRONT_KINDS) {
    it(`copies every record with ${kind} on both sides`, async () => {
      // Prepare
      const topic = `SECURED-${kind.toUpperCase()}-${process.pid}`;
      const table = `leases-${randomUUID()}`;
      const opts = { brokers: BROKERS, pki, username: USER, password: PASSWORD };
      const source: SecuredCluster = await startSecuredCluster(kind, opts);
      const target: SecuredCluster = await startSecuredCluster(kind, opts);
      try {
        await source.kafka.createTopic(topic, PARTITIONS, 1);
        for (let p = 0; p < PARTITIONS; p++) await source.kafka.moveLeader(topic, p, (p % BROKERS) + 1);
        for (let p = 0; p < PARTITIONS; p++) {
          const records = Array.from({ length: PER_PARTITION }, (_, i) => ({
            key: Buffer.from(`k${i % 7}`),
            value: Buffer.from(`${kind}-${p}-${i}`),
          }));
          await kcatProduce({
            brokers: source.bootstrapServers,
            topic,
            partition: p,
            records,
            config: source.kcat,
          });
        }
        await createTable(table);
        const arn = (side: string) =>
          `arn:aws:secretsmanager:${REGION}:123456789012:secret:${side}-${kind}-AbCdEf`;
        const env = replicateEnvironment(kind, { source, target }, table, arn);

        if (leakRequested(kind)) await Promise.all([source.leak(), target.leak()]);

        // Act
        const copy = await invokeBundle(bundles.replicate, env, 25_000);

        // Assess
        assert.equal(copy.result.ok, true, copy.result.error);
        assert.equal(copy.result.result?.errors, 0, copy.stdout.slice(-3000));
        assert.equal(copy.result.result?.records, PARTITIONS * PER_PARTITION, copy.stdout.slice(-3000));
        assert.ok(secrets.requests.includes(arn("source")) && secrets.requests.includes(arn("target")));
        for (let p = 0; p < PARTITIONS; p++) {
          const read = (c: SecuredCluster) =>
            kcatRead({ brokers: c.bootstrapServers, topic, partition: p, config: c.kcat, timeoutMs: 30_000 });
          const [a, b] = await Promise.all([read(source), read(target)]);
          assert.equal(a.length, PER_PARTITION);
          assert.deepEqual(
            b.map((r) => [r.key?.toString("utf8"), r.value?.toString("utf8")]),
            a.map((r) => [r.key?.toString("utf8"), r.value?.toString("utf8")]),
            `${topic}/${p}`,
          );
        }
        assert.ok(!copy.stdout.includes(PASSWORD), "a password reached the logs");
      } finally {
        await Promise.all([source.stop(), target.stop()]);
      }
    });
  }
});
