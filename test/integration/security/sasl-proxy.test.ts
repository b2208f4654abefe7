/**
 * The SASL-terminating proxy (test/helpers/sasl-proxy.ts) checked with an independent client:
 * kcat (librdkafka 2.0.2, not our code) authenticates with PLAIN, SCRAM-SHA-256 and
 * SCRAM-SHA-512 (the right password accepted, a wrong one and an unknown user refused), then
 * produces to and fetches from partitions led by each of three brokers, given one proxy address:
 * the leaders are reached at the addresses the rewritten Metadata names, so every request goes
 * through the proxy (SASL_PROXY_BROKEN=1 leaves Metadata unrewritten to see this go red: kcat then
 * meets the bare brokers, which know no SASL). librdkafka checks the SCRAM server signature, so an
 * accepted SCRAM login also proves the proxy's server-final message.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { after, before, describe, it } from "node:test";
import { KCAT, kcatProduce, kcatRead } from "../../helpers/kcat.js";
import { kcatListMetadata } from "../../helpers/kcat-probe.js";
import { ApiKey, type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";
import { type SaslProxy, startSaslProxy } from "../../helpers/sasl-proxy.js";
import { SASL_MECHANISMS, type SaslMechanism } from "../../helpers/sasl-server.js";

const BROKERS = 3;
const USER = "mirror";
const PASSWORD = "s3cret=,pass";
const BROKEN = process.env.SASL_PROXY_BROKEN === "1";

function saslConfig(mechanism: SaslMechanism, username: string, password: string): Record<string, string> {
  return {
    "security.protocol": "sasl_plaintext",
    "sasl.mechanisms": mechanism,
    "sasl.username": username,
    "sasl.password": password,
    "socket.timeout.ms": "5000",
    "message.timeout.ms": "8000",
  };
}

/** `kcat -L` output's broker lines: "broker 2 at 127.0.0.1:4321". */
function advertisedBrokers(address: string, config: Record<string, string>): Promise<string[]> {
  const args = [
    "-b",
    address,
    "-L",
    "-m",
    "5",
    ...Object.entries(config).flatMap(([k, v]) => ["-X", `${k}=${v}`]),
  ];
  return new Promise((resolve, reject) => {
    execFile(KCAT, args, { timeout: 15_000, encoding: "utf8" }, (error, stdout, stderr) => {
      if (error) reject(new Error(`kcat -L failed: ${stderr}`));
      else resolve([...stdout.matchAll(/broker \d+ at (\S+)/g)].map((m) => m[1] ?? ""));
    });
  });
}

describe("SASL proxy in front of a 3-broker mock cluster, checked with kcat", () => {
  let kafka: MockKafka;
  let proxy: SaslProxy;
  let legacy: SaslProxy;

  before(async () => {
    kafka = await startMockKafka({ brokers: BROKERS });
    const brokers = await Promise.all(
      [1, 2, 3].map(async (nodeId) => ({ nodeId, address: await kafka.listener(nodeId) })),
    );
    const users = { [USER]: PASSWORD };
    proxy = await startSaslProxy({ brokers, users, rewriteAddresses: !BROKEN });
    legacy = await startSaslProxy({ brokers, users, legacyHandshake: true, rewriteAddresses: !BROKEN });
  });

  after(async () => {
    await Promise.all([proxy?.stop(), legacy?.stop()]);
    await kafka?.stop();
  });

  for (const mechanism of SASL_MECHANISMS) {
    describe(mechanism, () => {
      const topic = `sasl-${mechanism.toLowerCase()}-${process.pid}`;

      before(async () => {
        await kafka.createTopic(topic, BROKERS, 1);
        for (let p = 0; p < BROKERS; p++) await kafka.setLeader(topic, p, p + 1);
      });

      it("accepts the right password; Metadata names only the proxy's listeners", async () => {
        const before = proxy.attempts.length;
        const seen = await advertisedBrokers(
          proxy.bootstrapServers[0] ?? "",
          saslConfig(mechanism, USER, PASSWORD),
        );
        assert.deepEqual(seen.sort(), [...proxy.bootstrapServers].sort());
        assert.deepEqual(proxy.attempts[before], { mechanism, ok: true, username: USER });
      });

      it("produces to and fetches from every broker's partition through the proxy", async () => {
        const config = saslConfig(mechanism, USER, PASSWORD);
        const produced = proxy.relayed(ApiKey.Produce);
        const fetched = proxy.relayed(1);
        const bootstrap = proxy.bootstrapServers[1] ?? "";
        for (let p = 0; p < BROKERS; p++) {
          const records = [0, 1].map((i) => ({
            key: Buffer.from(`k${i}`),
            value: Buffer.from(`${mechanism}-${p}-${i}`),
          }));
          await kcatProduce({ brokers: bootstrap, topic, partition: p, records, config, timeoutMs: 20_000 });
          const read = await kcatRead({ brokers: bootstrap, topic, partition: p, config, timeoutMs: 20_000 });
          assert.deepEqual(
            read.map((r) => r.value?.toString("utf8")),
            records.map((r) => r.value.toString("utf8")),
          );
        }
        assert.ok(
          proxy.relayed(ApiKey.Produce) >= produced + BROKERS,
          "every Produce went through the proxy",
        );
        assert.ok(proxy.relayed(1) >= fetched + BROKERS, "every Fetch went through the proxy");
      });

      it("refuses a wrong password and an unknown user", async () => {
        const before = proxy.attempts.length;
        const wrong = await kcatListMetadata(
          proxy.bootstrapServers[0] ?? "",
          saslConfig(mechanism, USER, "wrong"),
        );
        assert.equal(wrong.ok, false);
        assert.match(wrong.stderr, /Authentication failed|SASL/i);
        const unknown = await kcatListMetadata(
          proxy.bootstrapServers[0] ?? "",
          saslConfig(mechanism, "nobody", PASSWORD),
        );
        assert.equal(unknown.ok, false);
        const failures = proxy.attempts.slice(before).filter((a) => !a.ok);
        assert.ok(failures.length >= 2, JSON.stringify(proxy.attempts.slice(before)));
        assert.ok(proxy.attempts.slice(before).every((a) => !a.ok));
      });

      it("speaks the v0 framing too (SaslHandshake v0, bare tokens): right accepted, wrong refused", async () => {
        const address = legacy.bootstrapServers[0] ?? "";
        const right = await kcatListMetadata(address, saslConfig(mechanism, USER, PASSWORD));
        assert.equal(right.ok, true, right.stderr);
        assert.deepEqual(legacy.attempts.at(-1), { mechanism, ok: true, username: USER });
        const before = legacy.attempts.length;
        const wrong = await kcatListMetadata(address, saslConfig(mechanism, USER, `${PASSWORD}x`));
        assert.equal(wrong.ok, false);
        // The proxy itself refused (not only kcat, which also checks the server's signature).
        assert.ok(legacy.attempts.length > before);
        assert.ok(
          legacy.attempts.slice(before).every((a) => !a.ok),
          JSON.stringify(legacy.attempts.slice(before)),
        );
      });
    });
  }
});
