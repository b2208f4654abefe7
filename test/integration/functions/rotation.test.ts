/**
 * Secret rotation in a warm container: clients built with the cached (old) password are refused
 * by a broker; RefreshOnAuthFailure re-reads the secret past the cache once, rebuilds and retries.
 * The refusal is a real one, from kafkajs against a SASL-refusing listener; the secret source is
 * an in-memory fake of our SecretSource interface.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { parseConfig } from "../../../lib/config/schema.js";
import { isReplicatorError } from "../../../lib/errors.js";
import { KafkaClusterAdmin } from "../../../lib/kafka/admin/cluster-admin.js";
import { isAuthenticationFailure } from "../../../lib/kafka/wire/security.js";
import { clusterSecurityOptions } from "../../../lib/secrets/cluster-security.js";
import { RefreshOnAuthFailure } from "../../../lib/secrets/credential-refresh.js";
import { kafkaConnectionOptions } from "../../../lib/wiring.js";
import { CapturingLogger } from "../../helpers/fake-observability.js";
import { RotatingSecrets } from "../../helpers/rotating-secrets.js";
import { type SaslRefusingBroker, startSaslRefusingBroker } from "../../helpers/sasl-refusing-broker.js";

const SECRET = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:source-kafka";

describe("RefreshOnAuthFailure (secret rotation)", () => {
  let broker: SaslRefusingBroker;
  before(async () => {
    broker = await startSaslRefusingBroker();
  });
  after(() => broker.close());

  /** Clients for the refusing broker, with whatever password the secret gave. */
  const rig = (secrets: RotatingSecrets) => {
    const cluster = parseConfig({
      source: {
        brokers: broker.address,
        saslMechanism: "plain",
        secretArn: SECRET,
        connectionTimeoutMs: 2_000,
      },
      target: { brokers: "127.0.0.1:1" },
      topics: { whitelist: ".*" },
    }).source;
    const built: { password: string; closed: boolean }[] = [];
    const refresh = new RefreshOnAuthFailure(async (fresh) => {
      const security = await clusterSecurityOptions(cluster, "source", { secrets, fresh });
      const sasl = security.sasl;
      const password = sasl !== undefined && "password" in sasl ? sasl.password : "";
      const admin = new KafkaClusterAdmin({
        ...kafkaConnectionOptions(cluster, undefined, security),
      });
      const entry = { password, closed: false };
      built.push(entry);
      return {
        password,
        admin,
        async close() {
          entry.closed = true;
          await admin.close();
        },
      };
    }, new CapturingLogger());
    // The broker refuses everyone; "new" stands for the rotated password it would accept.
    const call = async (clients: { password: string; admin: KafkaClusterAdmin }) => {
      if (clients.password === "new") return "connected";
      await clients.admin.listTopics();
      return "unexpected";
    };
    return { refresh, built, call };
  };

  it("re-reads a rotated secret once after a refused login and reconnects with it", async () => {
    const secrets = new RotatingSecrets(
      { username: "u", password: "old" },
      { username: "u", password: "new" },
    );
    const { refresh, built, call } = rig(secrets);

    assert.equal(await refresh.use(call), "connected");

    assert.deepEqual(secrets.reads, [{ fresh: false }, { fresh: true }]);
    assert.deepEqual(built, [
      { password: "old", closed: true },
      { password: "new", closed: false },
    ]);
    // The rebuilt clients are kept for the next invocation.
    assert.equal(await refresh.use(call), "connected");
    assert.equal(built.length, 2);
  });

  it("re-reads only once: a secret that is still wrong is the invocation's error", async () => {
    const secrets = new RotatingSecrets(
      { username: "u", password: "old" },
      { username: "u", password: "still-old" },
    );
    const { refresh, built, call } = rig(secrets);

    // Our adapter's code for it, which the replicate function looks for in a run summary.
    await assert.rejects(
      refresh.use(call),
      (error) => isReplicatorError(error, "AUTHENTICATION_FAILED") && isAuthenticationFailure(error),
    );

    assert.deepEqual(secrets.reads, [{ fresh: false }, { fresh: true }]);
    assert.equal(built.length, 2);
  });

  it("does not rebuild for failures that are not authentication", async () => {
    const secrets = new RotatingSecrets({ username: "u", password: "old" });
    const { refresh, built } = rig(secrets);

    await assert.rejects(
      refresh.use(async () => {
        throw new Error("broker unreachable");
      }),
      /broker unreachable/,
    );
    assert.equal(built.length, 1);
    assert.deepEqual(secrets.reads, [{ fresh: false }]);
  });
});
