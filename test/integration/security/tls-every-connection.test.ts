/**
 * TLS on every connection, mutual TLS: stunnel in front of each of three mock brokers, the
 * cluster advertising the stunnel ports (test/helpers/tls-brokers.ts). kcat (librdkafka 2.0.2,
 * not our code) produces to and fetches from partitions led by every broker, given only one TLS
 * bootstrap address and `security.protocol=ssl`: it reaches the leaders at the addresses Metadata
 * advertises, so a broker advertising its plaintext listener makes these produce and fetch calls
 * fail (TLS_EVERY_CONNECTION_BROKEN=1 runs the suite against such a cluster to see it go red).
 * Our own client is checked too: the Metadata kafkajs reads through our connection options names
 * only TLS addresses.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createKafkaCluster } from "../../../lib/kafka/wire/kafkajs-internals.js";
import { kafkaSecurityOptions } from "../../../lib/kafka/wire/security.js";
import { kcatProduce, kcatRead } from "../../helpers/kcat.js";
import { kcatListMetadata } from "../../helpers/kcat-probe.js";
import { type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";
import { startTlsFront, type TlsFront } from "../../helpers/tls-brokers.js";
import { makeTestPki, type TestPki } from "../../helpers/tls-certs.js";

const BROKERS = 3;
const TOPIC = `tls-every-${process.pid}`;
const BROKEN = process.env.TLS_EVERY_CONNECTION_BROKEN === "1";

describe("TLS on every connection (stunnel per broker, mutual TLS)", () => {
  let pki: TestPki;
  let kafka: MockKafka;
  let front: TlsFront;

  const ssl = (withClientCert = true): Record<string, string> => ({
    "security.protocol": "ssl",
    "ssl.ca.location": pki.ca.path,
    ...(withClientCert
      ? { "ssl.certificate.location": pki.clientCert.path, "ssl.key.location": pki.clientKey.path }
      : {}),
    "socket.timeout.ms": "5000",
    "message.timeout.ms": "8000",
  });

  before(async () => {
    pki = makeTestPki();
    kafka = await startMockKafka({ brokers: BROKERS });
    await kafka.createTopic(TOPIC, BROKERS, 1);
    // One partition led by each broker, so every broker's connection is exercised.
    for (let p = 0; p < BROKERS; p++) await kafka.setLeader(TOPIC, p, p + 1);
    front = await startTlsFront(kafka, pki, { brokers: BROKERS, mutual: true, advertisePlaintext: BROKEN });
  });

  after(async () => {
    await Promise.all([front?.stop(), kafka?.stop()]);
    pki?.remove();
  });

  it("kcat produces to and fetches from every broker's partition over TLS, bootstrapped through one", async () => {
    const bootstrap = front.bootstrapServers[0] ?? "";
    for (let p = 0; p < BROKERS; p++) {
      const records = [0, 1, 2].map((i) => ({
        key: Buffer.from(`k${p}-${i}`),
        value: Buffer.from(`v${p}-${i}`),
      }));
      await kcatProduce({
        brokers: bootstrap,
        topic: TOPIC,
        partition: p,
        records,
        config: ssl(),
        timeoutMs: 20_000,
      });
      const read = await kcatRead({
        brokers: bootstrap,
        topic: TOPIC,
        partition: p,
        config: ssl(),
        timeoutMs: 20_000,
      });
      assert.deepEqual(
        read.map((r) => r.value?.toString("utf8")),
        records.map((r) => r.value.toString("utf8")),
        `partition ${p} (leader ${p + 1})`,
      );
    }
  });

  it("Metadata read by our client through TLS advertises only the TLS terminators", async () => {
    const security = kafkaSecurityOptions({
      tls: true,
      saslMechanism: "none",
      credentials: { ca: pki.ca.pem, cert: pki.clientCert.pem, key: pki.clientKey.pem },
    });
    const cluster = createKafkaCluster({
      brokers: [front.bootstrapServers[1] ?? ""],
      connectionTimeoutMs: 3_000,
      requestTimeoutMs: 5_000,
      ...security,
    });
    try {
      await cluster.connect();
      await cluster.refreshMetadata();
      const advertised = (cluster.brokerPool.metadata?.brokers ?? [])
        .map((b) => `${b.host}:${b.port}`)
        .sort();
      assert.deepEqual(advertised, [...front.bootstrapServers].sort());
    } finally {
      await cluster.disconnect();
    }
  });

  it("a plaintext client cannot talk to an advertised address", async () => {
    for (const address of front.bootstrapServers) {
      const probe = await kcatListMetadata(address, { "socket.timeout.ms": "3000" });
      assert.equal(probe.ok, false, `plaintext metadata through ${address} should fail`);
    }
  });

  it("a TLS client without a client certificate is refused (mutual TLS)", async () => {
    const withCert = await kcatListMetadata(front.bootstrapServers[0] ?? "", ssl());
    assert.equal(withCert.ok, true, withCert.stderr);
    const without = await kcatListMetadata(front.bootstrapServers[0] ?? "", ssl(false));
    assert.equal(without.ok, false);
  });
});
