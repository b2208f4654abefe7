/**
 * The real `kafka-mirror` bin, `run --once`, copies a topic end to end through each security
 * front on both sides: mutual TLS on every connection (CA, client certificate and key from PEM
 * files: `tls`, `tlsCaFile`, `tlsCertFile`, `tlsKeyFile`) and the SASL proxy with PLAIN,
 * SCRAM-SHA-256 and SCRAM-SHA-512 (the source's credentials from KAFKA_MIRROR_SOURCE_USERNAME /
 * _PASSWORD, the target's from a `credentialsFile`). A wrong password ends the run with one clear
 * error line and exit code 3, and no password is printed. kcat writes the source and reads both
 * sides back through the same fronts. TLS_EVERY_CONNECTION_BROKEN=1 / SASL_PROXY_BROKEN=1 make
 * the fronts leak the brokers' plaintext listeners once the source is written: the copy fails.
 *
 * With KAFKA_TESTBED=real there is no front of ours: real Kafka's own SSL listener (mutual TLS,
 * the broker demands our certificate) and SASL_SSL listener (SCRAM-SHA-256/512 over TLS, the
 * broker checks the password) on one broker per side, shared by the kinds; the launcher offers
 * no PLAIN. kcat reaches the data through the mutual TLS listener (it cannot log in with SCRAM
 * to Kafka 4). Our client is also refused by the broker without a client certificate, and
 * refuses a broker its CA did not sign.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { stopLeaseServer } from "../../../lib/dynamodb/embedded/ensure.js";
import { spawnCli } from "../../helpers/cli.js";
import { testBedSettings } from "../../helpers/cli-config.js";
import { KAFKA_TESTBED } from "../../helpers/kafka-testbed.js";
import { kcatProduce, kcatRead } from "../../helpers/kcat.js";
import {
  FRONT_KINDS,
  type FrontKind,
  leakRequested,
  REAL_FRONT_KINDS,
  type RealSecured,
  type SecuredCluster,
  startRealSecured,
  startSecuredCluster,
} from "../../helpers/secured-clusters.js";
import { makeTestPki, type TestPki } from "../../helpers/tls-certs.js";

const BROKERS = 2;

/** What our client brings to a TLS listener: our CA and certificate, no certificate, or another CA. */
type TlsChoice = "ours" | "no-client-certificate" | "other-ca";
const PARTITIONS = 3;
const PER_PARTITION = 120;
const USER = "mirror-cli";
/** Characters a config or environment variable might trip on; real Kafka's StorageTool takes no ":=,". */
const PASSWORD = KAFKA_TESTBED === "real" ? "cli-pass.@9" : "cli-pass:=,9";
const REAL = KAFKA_TESTBED === "real";

describe("kafka-mirror run --once through secured clusters", () => {
  let pki: TestPki;
  let dir: string;
  const stateDirs: string[] = [];
  /** Real Kafka: one cluster per side, serving every kind through its own listeners. */
  let real: { source: RealSecured; target: RealSecured } | undefined;

  before(async () => {
    pki = makeTestPki();
    dir = await mkdtemp(join(tmpdir(), "kafka-mirror-cli-secured-"));
    if (REAL) {
      const opts = { pki, username: USER, password: PASSWORD };
      const [source, target] = await Promise.all([startRealSecured(opts), startRealSecured(opts)]);
      real = { source, target };
    }
  });

  after(async () => {
    for (const stateDir of stateDirs) await stopLeaseServer(stateDir);
    await Promise.allSettled([real?.source.stop(), real?.target.stop()]);
    await rm(dir, { recursive: true, force: true });
    pki?.remove();
  });

  /**
   * One side's YAML lines for the front (the credentials themselves never go in the config);
   * `tls` changes what our client brings to a TLS listener.
   */
  async function sideConfig(
    name: "source" | "target",
    cluster: SecuredCluster,
    tls: TlsChoice = "ours",
  ): Promise<string[]> {
    const lines = [`${name}:`, `  brokers: ${cluster.bootstrapServers.join(",")}`];
    if (cluster.kind === "mtls" || cluster.saslOverTls) {
      const ca = tls === "other-ca" ? pki.otherCa.path : pki.ca.path;
      lines.push("  tls: true", `  tlsCaFile: ${ca}`);
    }
    if (cluster.kind === "mtls") {
      if (tls === "no-client-certificate") return lines;
      return [...lines, `  tlsCertFile: ${pki.clientCert.path}`, `  tlsKeyFile: ${pki.clientKey.path}`];
    }
    lines.push(`  saslMechanism: ${cluster.kind}`);
    if (name === "target") {
      const file = join(dir, `target-credentials-${cluster.kind}.json`);
      await writeFile(file, JSON.stringify({ username: USER, password: PASSWORD }), { mode: 0o600 });
      lines.push(`  credentialsFile: ${file}`);
    }
    return lines;
  }

  async function runOnce(
    kind: FrontKind,
    source: SecuredCluster,
    target: SecuredCluster,
    topic: string,
    sourcePassword: string,
    sourceTls: TlsChoice = "ours",
  ) {
    const name = `${kind}-${sourcePassword.length}-${sourceTls}`;
    const config = join(dir, `${name}.yaml`);
    await writeFile(
      config,
      [
        ...(await sideConfig("source", source, sourceTls)),
        ...(await sideConfig("target", target)),
        ...testBedSettings(topic, 3000),
        "",
      ].join("\n"),
    );
    const stateDir = join(dir, `state-${name}`);
    stateDirs.push(stateDir);
    const env = {
      ...process.env,
      ...(kind === "mtls"
        ? {}
        : { KAFKA_MIRROR_SOURCE_USERNAME: USER, KAFKA_MIRROR_SOURCE_PASSWORD: sourcePassword }),
    };
    return spawnCli(["run", "--once", "--config", config, "--state-dir", stateDir], {
      env,
      killAfterMs: 90_000,
    });
  }

  for (const kind of REAL ? REAL_FRONT_KINDS : FRONT_KINDS) {
    describe(kind, () => {
      let source: SecuredCluster;
      let target: SecuredCluster;
      const topic = `CLI-SECURED-${kind.toUpperCase()}-${process.pid}`;

      before(async () => {
        const opts = { brokers: BROKERS, pki, username: USER, password: PASSWORD };
        [source, target] = real
          ? [real.source.view(kind), real.target.view(kind)]
          : await Promise.all([startSecuredCluster(kind, opts), startSecuredCluster(kind, opts)]);
        await source.kafka.createTopic(topic, PARTITIONS, 1);
        for (let p = 0; p < PARTITIONS; p++) {
          // Partitions led by every broker, so every broker's front is crossed (real: one broker).
          if (!REAL) await source.kafka.moveLeader(topic, p, (p % BROKERS) + 1);
          const records = Array.from({ length: PER_PARTITION }, (_, i) => ({
            key: Buffer.from(`k${i}`),
            value: Buffer.from(`cli-${kind}-${p}-${i}`),
          }));
          await kcatProduce({
            brokers: source.kcatBrokers,
            topic,
            partition: p,
            records,
            config: source.kcat,
          });
        }
        // TLS_EVERY_CONNECTION_BROKEN=1 / SASL_PROXY_BROKEN=1: the copy must then fail.
        if (leakRequested(kind)) await Promise.all([source.leak(), target.leak()]);
      });

      after(async () => {
        await Promise.all([source?.stop(), target?.stop()]);
      });

      if (kind !== "mtls") {
        it("a wrong password: one clear error line, exit code 3, no password printed", async () => {
          const result = await runOnce(kind, source, target, topic, "not-the-password");
          assert.equal(result.code, 3, `stdout: ${result.stdout}\nstderr: ${result.stderr}`);
          const lines = result.stderr.split("\n").filter((l) => l.trim() !== "");
          assert.equal(lines.length, 1, result.stderr);
          assert.match(lines[0] ?? "", /auth|credential|password|SASL/i);
          for (const text of [result.stdout, result.stderr]) {
            assert.ok(
              !text.includes("not-the-password") && !text.includes(PASSWORD),
              "a password was printed",
            );
          }
        });
      }

      if (kind === "mtls" && REAL) {
        it("the broker refuses our client without a client certificate; we refuse a broker our CA did not sign", async () => {
          // The broker's alert 42 (bad_certificate), then Node's own verification failure.
          const expected = {
            "no-client-certificate": /alert bad certificate/,
            "other-ca": /unable to verify the first certificate/,
          } as const;
          for (const [tls, reason] of Object.entries(expected) as [TlsChoice, RegExp][]) {
            const result = await runOnce(kind, source, target, topic, PASSWORD, tls);
            assert.equal(result.code, 3, `${tls}: stdout: ${result.stdout}\nstderr: ${result.stderr}`);
            assert.match(result.stderr, reason, tls);
          }
        });
      }

      it("copies every record", async () => {
        const result = await runOnce(kind, source, target, topic, PASSWORD);
        assert.equal(result.code, 0, `stdout: ${result.stdout}\nstderr: ${result.stderr}`);
        assert.ok(
          !result.stdout.includes(PASSWORD) && !result.stderr.includes(PASSWORD),
          "a password was printed",
        );
        for (let p = 0; p < PARTITIONS; p++) {
          const read = (c: SecuredCluster) =>
            kcatRead({ brokers: c.kcatBrokers, topic, partition: p, config: c.kcat, timeoutMs: 30_000 });
          const [a, b] = await Promise.all([read(source), read(target)]);
          assert.equal(a.length, PER_PARTITION);
          assert.deepEqual(
            b.map((r) => r.value?.toString("utf8")),
            a.map((r) => r.value?.toString("utf8")),
            `${topic}/${p}`,
          );
        }
      });
    });
  }
});
