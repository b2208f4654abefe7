/**
 * kafkajs, through our connection options, talks TLS to a real TLS terminator (stunnel, from apt)
 * in front of a mock Kafka broker, with certificate verification on: a certificate from our
 * private CA is accepted, one we do not trust is refused, and a terminator that demands client
 * certificates (mutual TLS) accepts ours and refuses a client without one.
 *
 * Scope: the mock broker advertises its own plaintext address in Metadata (our launcher cannot
 * change it), so only the bootstrap connection can go through stunnel: these tests connect the
 * kafkajs Cluster our adapters build (createKafkaCluster, the ssl/sasl seam) and read Metadata
 * over it. That proves the handshake, certificate verification and Kafka requests and responses
 * over TLS (ApiVersions, Metadata); Fetch and Produce over TLS are not exercised here.
 */
import assert from "node:assert/strict";
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { ClusterCredentials } from "../../../lib/config/credentials.js";
import { createKafkaCluster } from "../../../lib/kafka/wire/kafkajs-internals.js";
import { type KafkaSecurityOptions, kafkaSecurityOptions } from "../../../lib/kafka/wire/security.js";
import { type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";
import { freePort } from "../../helpers/net.js";

const TOPIC = `tls-topic-${process.pid}`;

interface Pki {
  dir: string;
  ca: string;
  otherCa: string;
  clientCert: string;
  clientKey: string;
}

/** A private CA, a server certificate for 127.0.0.1 it signed, a client certificate, and an unrelated CA. */
function makePki(): Pki {
  const dir = mkdtempSync(join(tmpdir(), "kafka-mirror-tls-"));
  const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  const newCa = (name: string) =>
    openssl(
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "1",
      "-keyout",
      `${name}.key`,
      "-out",
      `${name}.pem`,
      "-subj",
      `/CN=${name}`,
    );
  const issue = (name: string, ext: string) => {
    openssl(
      "req",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      `${name}.key`,
      "-out",
      `${name}.csr`,
      "-subj",
      `/CN=${name}`,
    );
    writeFileSync(join(dir, `${name}.ext`), ext);
    openssl(
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      "-CA",
      "ca.pem",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-days",
      "1",
      "-out",
      `${name}.pem`,
      "-extfile",
      `${name}.ext`,
    );
  };
  newCa("ca");
  newCa("other-ca");
  issue("server", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");
  issue("client", "extendedKeyUsage=clientAuth\n");
  const read = (file: string) => readFileSync(join(dir, file), "utf8");
  return {
    dir,
    ca: read("ca.pem"),
    otherCa: read("other-ca.pem"),
    clientCert: read("client.pem"),
    clientKey: read("client.key"),
  };
}

async function waitForPort(port: number, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`stunnel exited: ${log()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: "127.0.0.1", port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`stunnel not listening on ${port}: ${log()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface Stunnel {
  address: string;
  stop(): Promise<void>;
}

/** stunnel in server mode in front of `upstream`; with `requireClientCert`, only our CA's clients get in. */
async function startStunnel(
  pki: Pki,
  upstream: string,
  name: string,
  requireClientCert: boolean,
): Promise<Stunnel> {
  const port = await freePort();
  const config = join(pki.dir, `${name}.conf`);
  writeFileSync(
    config,
    [
      "foreground = yes",
      "pid =",
      "debug = 4",
      `[${name}]`,
      `accept = 127.0.0.1:${port}`,
      `connect = ${upstream}`,
      `cert = ${join(pki.dir, "server.pem")}`,
      `key = ${join(pki.dir, "server.key")}`,
      ...(requireClientCert ? [`CAfile = ${join(pki.dir, "ca.pem")}`, "verifyChain = yes"] : []),
      "",
    ].join("\n"),
  );
  const child = spawn("stunnel4", [config], { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    log = (log + chunk.toString("utf8")).slice(-4000);
  });
  await waitForPort(port, child, () => log);
  return {
    address: `127.0.0.1:${port}`,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** Topic names and partition counts read over the bootstrap connection; closes what it opens. */
async function topicsThrough(address: string, security: KafkaSecurityOptions): Promise<Map<string, number>> {
  const cluster = createKafkaCluster({
    brokers: [address],
    connectionTimeoutMs: 3_000,
    requestTimeoutMs: 5_000,
    ...security,
  });
  try {
    await cluster.connect();
    // The first refresh goes through the seed (bootstrap) broker: here, through stunnel.
    await cluster.refreshMetadata();
    const topics = cluster.brokerPool.metadata?.topicMetadata ?? [];
    return new Map(topics.map((t) => [t.topic, t.partitionMetadata.length]));
  } finally {
    await cluster.disconnect();
  }
}

function verified(credentials: ClusterCredentials): KafkaSecurityOptions {
  return kafkaSecurityOptions({ tls: true, saslMechanism: "none", credentials });
}

describe("TLS to a broker behind stunnel, verification on", () => {
  let pki: Pki;
  let kafka: MockKafka;
  let tls: Stunnel;
  let mutualTls: Stunnel;

  before(async () => {
    pki = makePki();
    kafka = await startMockKafka({ brokers: 1 });
    await kafka.createTopic(TOPIC, 3);
    const upstream = kafka.bootstrapServers[0];
    assert.ok(upstream);
    [tls, mutualTls] = await Promise.all([
      startStunnel(pki, upstream, "kafka-tls", false),
      startStunnel(pki, upstream, "kafka-mtls", true),
    ]);
  });

  after(async () => {
    await Promise.all([tls?.stop(), mutualTls?.stop(), kafka?.stop()]);
    if (pki !== undefined) rmSync(pki.dir, { recursive: true, force: true });
  });

  it("reads metadata over TLS when the server's certificate chains to the configured CA", async () => {
    const topics = await topicsThrough(tls.address, verified({ ca: pki.ca }));
    assert.equal(topics.get(TOPIC), 3);
  });

  it("refuses a server whose certificate does not chain to the configured CA", async () => {
    await assert.rejects(topicsThrough(tls.address, verified({ ca: pki.otherCa })), (error) => {
      assert.match(describeCauses(error), /self[- ]signed|unable to (get|verify)|certificate/i);
      return true;
    });
  });

  it("refuses the system CAs too: verification is never switched off", async () => {
    await assert.rejects(topicsThrough(tls.address, verified({})), (error) => {
      assert.match(describeCauses(error), /self[- ]signed|unable to (get|verify)|certificate/i);
      return true;
    });
  });

  it("does not speak plaintext to a TLS listener", async () => {
    await assert.rejects(topicsThrough(tls.address, {}));
  });

  it("presents our client certificate for mutual TLS, and is refused without one", async () => {
    const topics = await topicsThrough(
      mutualTls.address,
      verified({ ca: pki.ca, cert: pki.clientCert, key: pki.clientKey }),
    );
    assert.equal(topics.get(TOPIC), 3);
    await assert.rejects(topicsThrough(mutualTls.address, verified({ ca: pki.ca })));
  });
});

/** The messages of an error and its causes, where TLS failures end up after translation. */
function describeCauses(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 5; depth++) {
    parts.push(`${current.name}: ${current.message}`);
    current = current.cause;
  }
  return parts.join(" <- ");
}
