/**
 * Maps a cluster's security settings (TLS, SASL mechanism) and the credentials read from its
 * secret onto kafkajs's `ssl` and `sasl` options. Certificate verification is always on: a
 * replicator that silently accepts any certificate would hand its credentials to whoever
 * answers on the broker's address.
 */

import type { ConnectionOptions } from "node:tls";
import { generateAuthToken } from "aws-msk-iam-sasl-signer-js";
import type { SASLOptions } from "kafkajs";
import type { ClusterCredentials } from "../../config/credentials.js";
import type { SASL_MECHANISMS } from "../../config/schema.js";
import { isReplicatorError, ReplicatorError } from "../../errors.js";

export type SaslMechanism = (typeof SASL_MECHANISMS)[number];

export interface ClusterSecurity {
  readonly tls: boolean;
  readonly saslMechanism: SaslMechanism;
  /** Read from the cluster's secret; absent when it has none. */
  readonly credentials?: ClusterCredentials;
  /** Region MSK IAM tokens are signed for. */
  readonly region?: string;
  /** Overrides the SNI/certificate host name (brokers reached through an alias). @default the broker host */
  readonly serverName?: string;
}

/** Signs an MSK IAM token; injected by tests, the maintained signer library otherwise. */
export type IamTokenProvider = (region: string) => Promise<{ token: string; expiryTime: number }>;

export interface KafkaSecurityOptions {
  readonly ssl?: ConnectionOptions;
  readonly sasl?: SASLOptions;
}

// The signer takes credentials from the default AWS chain: the Lambda role, or the CLI user's
// environment, profile or instance role.
const signWithDefaultCredentials: IamTokenProvider = (region) => generateAuthToken({ region });

/**
 * Throws ReplicatorError CONFIG_INVALID listing every problem (never a credential's value).
 */
export function kafkaSecurityOptions(
  security: ClusterSecurity,
  iamTokenProvider: IamTokenProvider = signWithDefaultCredentials,
): KafkaSecurityOptions {
  const problems: string[] = [];
  const credentials = security.credentials ?? {};
  const ssl = tlsOptions(security, credentials, problems);
  const sasl = saslOptions(security, credentials, iamTokenProvider, problems);
  if (problems.length > 0) {
    throw new ReplicatorError("CONFIG_INVALID", `invalid cluster security: ${problems.join("; ")}`, {
      details: { problems },
    });
  }
  return { ...(ssl === undefined ? {} : { ssl }), ...(sasl === undefined ? {} : { sasl }) };
}

function tlsOptions(
  security: ClusterSecurity,
  credentials: ClusterCredentials,
  problems: string[],
): ConnectionOptions | undefined {
  const { ca, cert, key } = credentials;
  if (!security.tls) {
    if (ca !== undefined || cert !== undefined || key !== undefined) {
      problems.push("the secret holds TLS material (ca, cert or key) but tls is off");
    }
    return undefined;
  }
  if ((cert === undefined) !== (key === undefined)) {
    problems.push("mutual TLS needs both cert and key in the secret");
  }
  return {
    rejectUnauthorized: true,
    ...(ca === undefined ? {} : { ca: [ca] }),
    ...(cert === undefined || key === undefined ? {} : { cert, key }),
    ...(security.serverName === undefined ? {} : { servername: security.serverName }),
  };
}

function saslOptions(
  security: ClusterSecurity,
  credentials: ClusterCredentials,
  iamTokenProvider: IamTokenProvider,
  problems: string[],
): SASLOptions | undefined {
  const mechanism = security.saslMechanism;
  switch (mechanism) {
    case "none":
      return undefined;
    case "plain":
    case "scram-sha-256":
    case "scram-sha-512": {
      const { username, password } = credentials;
      if (!username) problems.push(`saslMechanism ${mechanism} needs "username" in the secret`);
      if (!password) problems.push(`saslMechanism ${mechanism} needs "password" in the secret`);
      if (!username || !password) return undefined;
      return { mechanism, username, password };
    }
    case "aws-msk-iam": {
      if (!security.tls) problems.push("saslMechanism aws-msk-iam needs tls");
      const region = security.region;
      if (!region) {
        problems.push("saslMechanism aws-msk-iam needs a region to sign tokens for");
        return undefined;
      }
      return {
        mechanism: "oauthbearer",
        // kafkajs calls this on every (re)authentication, so each connection gets a fresh token.
        oauthBearerProvider: async () => {
          const { token } = await iamTokenProvider(region);
          return { value: token };
        },
      };
    }
  }
}

// Kafka error codes of a refused authentication: UNSUPPORTED_SASL_MECHANISM, ILLEGAL_SASL_STATE,
// SASL_AUTHENTICATION_FAILED.
const AUTHENTICATION_ERROR_CODES = new Set([33, 34, 58]);

/**
 * True when the broker refused our credentials (or mechanism), looking through `cause`s: kafkajs
 * raises KafkaJSSASLAuthenticationError, an error response may carry one of the SASL codes, and
 * our own adapters translate either into AUTHENTICATION_FAILED.
 */
export function isAuthenticationFailure(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 10; e = e.cause, depth++) {
    if (isReplicatorError(e, "AUTHENTICATION_FAILED")) return true;
    if (e.name === "KafkaJSSASLAuthenticationError") return true;
    const details = (e as { details?: { kafkaErrorCode?: unknown } }).details;
    const code = details?.kafkaErrorCode ?? (e as { code?: unknown }).code;
    if (typeof code === "number" && AUTHENTICATION_ERROR_CODES.has(code)) return true;
    if ((e as { type?: unknown }).type === "SASL_AUTHENTICATION_FAILED") return true;
  }
  return false;
}
