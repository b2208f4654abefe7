// A cluster reachable only through one security front, for end-to-end tests. On the mock:
//   "mtls"              stunnel in front of every broker, mutual TLS, TLS ports advertised
//                       (tls-brokers.ts);
//   "plain", "scram-*"  the SASL proxy (sasl-proxy.ts), Metadata rewritten to its listeners.
// On real Kafka (startRealSecured) the broker's own listeners: SSL with ssl.client.auth=required
// for "mtls", SASL_SSL (SCRAM over server-only TLS) for "scram-*"; the broker authenticates,
// nothing of ours sits in between. `kcat` holds the librdkafka settings an independent client
// needs to reach the same data (to write the source and read the target back).
import { mockTestKafka, startTestKafka, type TestKafka } from "./kafka-testbed.js";
import { startMockKafka } from "./mock-kafka.js";
import { startSaslProxy } from "./sasl-proxy.js";
import type { SaslMechanism } from "./sasl-server.js";
import { startTlsFront } from "./tls-brokers.js";
import type { TestPki } from "./tls-certs.js";

export type FrontKind = "mtls" | "plain" | "scram-sha-256" | "scram-sha-512";
export const FRONT_KINDS: readonly FrontKind[] = ["mtls", "plain", "scram-sha-256", "scram-sha-512"];
/** The launcher's SASL_SSL listener offers SCRAM only (test/helpers/real-kafka-config.ts). */
export const REAL_FRONT_KINDS: readonly FrontKind[] = ["mtls", "scram-sha-256", "scram-sha-512"];

export interface SecuredCluster {
  readonly kind: FrontKind;
  readonly kafka: TestKafka;
  /** The front's addresses: the only ones a client may use. */
  readonly bootstrapServers: string[];
  /** SASL runs over TLS (real Kafka's SASL_SSL listener; the mock's proxy is plaintext). */
  readonly saslOverTls: boolean;
  /** Where kcat reads and writes the same data: the front itself, or the real broker's mutual TLS listener. */
  readonly kcatBrokers: string[];
  readonly kcat: Readonly<Record<string, string>>;
  /**
   * From now on let clients leak past the front: the brokers' plaintext listeners are advertised
   * (TLS) or Metadata is no longer rewritten (SASL). For watching end-to-end tests go red.
   */
  leak(): Promise<void>;
  stop(): Promise<void>;
}

export interface SecuredClusterOptions {
  readonly brokers: number;
  readonly pki: TestPki;
  readonly username: string;
  readonly password: string;
}

/**
 * TLS_EVERY_CONNECTION_BROKEN=1 (for "mtls") or SASL_PROXY_BROKEN=1 (for the SASL kinds) asks an
 * end-to-end test to call leak() once its source data is written, to show it then fails.
 */
export function leakRequested(kind: FrontKind): boolean {
  const variable = kind === "mtls" ? "TLS_EVERY_CONNECTION_BROKEN" : "SASL_PROXY_BROKEN";
  return process.env[variable] === "1";
}

const MECHANISM: Record<Exclude<FrontKind, "mtls">, SaslMechanism> = {
  plain: "PLAIN",
  "scram-sha-256": "SCRAM-SHA-256",
  "scram-sha-512": "SCRAM-SHA-512",
};

export async function startSecuredCluster(
  kind: FrontKind,
  opts: SecuredClusterOptions,
): Promise<SecuredCluster> {
  const kafka = await startMockKafka({ brokers: opts.brokers });
  try {
    if (kind === "mtls") {
      const front = await startTlsFront(kafka, opts.pki, {
        brokers: opts.brokers,
        mutual: true,
      });
      return {
        kind,
        kafka: mockTestKafka(kafka),
        bootstrapServers: front.bootstrapServers,
        saslOverTls: false,
        kcatBrokers: front.bootstrapServers,
        kcat: mutualTlsKcat(opts.pki),
        leak: () => front.advertisePlaintext(),
        stop: async () => {
          await front.stop();
          await kafka.stop();
        },
      };
    }
    const ids = Array.from({ length: opts.brokers }, (_, i) => i + 1);
    const brokers = await Promise.all(
      ids.map(async (nodeId) => ({ nodeId, address: await kafka.listener(nodeId) })),
    );
    const mechanism = MECHANISM[kind];
    const proxy = await startSaslProxy({
      brokers,
      users: { [opts.username]: opts.password },
      mechanisms: [mechanism],
    });
    return {
      kind,
      kafka: mockTestKafka(kafka),
      bootstrapServers: proxy.bootstrapServers,
      saslOverTls: false,
      kcatBrokers: proxy.bootstrapServers,
      kcat: {
        "security.protocol": "sasl_plaintext",
        "sasl.mechanisms": mechanism,
        "sasl.username": opts.username,
        "sasl.password": opts.password,
      },
      leak: async () => proxy.setRewriteAddresses(false),
      stop: async () => {
        await proxy.stop();
        await kafka.stop();
      },
    };
  } catch (error) {
    await kafka.stop();
    throw error;
  }
}

function mutualTlsKcat(pki: TestPki): Record<string, string> {
  return {
    "security.protocol": "ssl",
    "ssl.ca.location": pki.ca.path,
    "ssl.certificate.location": pki.clientCert.path,
    "ssl.key.location": pki.clientKey.path,
  };
}

/** Real Kafka with both secured listeners: one cluster serves every kind of REAL_FRONT_KINDS. */
export interface RealSecured {
  readonly kafka: TestKafka;
  /** The cluster as a test of `kind` sees it; stopping it is this object's stop(). */
  view(kind: FrontKind): SecuredCluster;
  stop(): Promise<void>;
}

/**
 * A 1-broker real Kafka whose SSL listener demands our client certificate and whose SASL_SSL
 * listener knows `username` with `password` for SCRAM-SHA-256 and -512. kcat 2.0.2 cannot log in
 * with SCRAM to Kafka 4 (its client nonce, librdkafka#4895), so it always goes through the SSL listener.
 */
export async function startRealSecured(opts: Omit<SecuredClusterOptions, "brokers">): Promise<RealSecured> {
  const { username, password } = opts;
  const kafka = await startTestKafka({
    kind: "real",
    brokers: 1,
    tls: opts.pki,
    scramUsers: [
      { mechanism: "SCRAM-SHA-256", username, password },
      { mechanism: "SCRAM-SHA-512", username, password },
    ],
  });
  if (kafka.kind !== "real") throw new Error("startRealSecured: not a real cluster");
  const { ssl = [], saslSsl = [] } = kafka.real.bootstrap;
  const kcatBrokers = ssl;
  const kcat = mutualTlsKcat(opts.pki);
  const refuseLeak = () =>
    Promise.reject(
      new Error("real Kafka's listeners are the broker's own: there is no front of ours to break"),
    );
  return {
    kafka,
    view(kind) {
      if (!REAL_FRONT_KINDS.includes(kind)) throw new Error(`real Kafka's test bed has no ${kind} listener`);
      const bootstrapServers = kind === "mtls" ? ssl : saslSsl;
      const saslOverTls = kind !== "mtls";
      return {
        kind,
        kafka,
        bootstrapServers,
        saslOverTls,
        kcatBrokers,
        kcat,
        leak: refuseLeak,
        stop: async () => {},
      };
    },
    stop: () => kafka.stop(),
  };
}
