// A mock cluster reachable only through one security front, for end-to-end tests:
//   "mtls"              stunnel in front of every broker, mutual TLS, TLS ports advertised
//                       (tls-brokers.ts);
//   "plain", "scram-*"  the SASL proxy (sasl-proxy.ts), Metadata rewritten to its listeners.
// `kcat` holds the librdkafka settings an independent client needs to reach it (to write the
// source data and read the target back through the same front).
import { type MockKafka, startMockKafka } from "./mock-kafka.js";
import { startSaslProxy } from "./sasl-proxy.js";
import type { SaslMechanism } from "./sasl-server.js";
import { startTlsFront } from "./tls-brokers.js";
import type { TestPki } from "./tls-certs.js";

export type FrontKind = "mtls" | "plain" | "scram-sha-256" | "scram-sha-512";
export const FRONT_KINDS: readonly FrontKind[] = ["mtls", "plain", "scram-sha-256", "scram-sha-512"];

export interface SecuredCluster {
  readonly kind: FrontKind;
  readonly kafka: MockKafka;
  /** The front's addresses: the only ones a client may use. */
  readonly bootstrapServers: string[];
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
        kafka,
        bootstrapServers: front.bootstrapServers,
        kcat: {
          "security.protocol": "ssl",
          "ssl.ca.location": opts.pki.ca.path,
          "ssl.certificate.location": opts.pki.clientCert.path,
          "ssl.key.location": opts.pki.clientKey.path,
        },
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
      kafka,
      bootstrapServers: proxy.bootstrapServers,
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
