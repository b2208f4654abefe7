/**
 * One cluster side's TLS and SASL options from its config, for the CLI and the functions alike:
 * PEM files named in the config (read now, at connect time), and PLAIN/SCRAM credentials from, in
 * order, the KAFKA_MIRROR_<SIDE>_USERNAME/PASSWORD variables, `credentialsFile`, or `secretArn`.
 * Errors name fields, files and variables, never a credential's value.
 */
import { readFile } from "node:fs/promises";
import type { ClusterCredentials } from "../config/credentials.js";
import { fileErrorReason } from "../config/file-error.js";
import type { ClusterConfig } from "../config/schema.js";
import { ReplicatorError } from "../errors.js";
import {
  type IamTokenProvider,
  type KafkaSecurityOptions,
  kafkaSecurityOptions,
} from "../kafka/wire/security.js";
import { parseClusterCredentials } from "./cluster-credentials.js";
import type { SecretSource } from "./secret-cache.js";

export type ClusterSide = "source" | "target";

/** Both sides' TLS and SASL options. */
export interface ClusterSecurity {
  readonly source: KafkaSecurityOptions;
  readonly target: KafkaSecurityOptions;
}

export interface SecurityInputs {
  /** Read for KAFKA_MIRROR_<SIDE>_USERNAME/PASSWORD. @default no variables */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Needed only when a side names a secretArn. */
  readonly secrets?: SecretSource;
  /** Re-read the secret, bypassing caches. @default false */
  readonly fresh?: boolean;
  /** Region MSK IAM tokens are signed for. */
  readonly region?: string;
  /** @default the maintained signer with the default AWS credential chain */
  readonly iamTokenProvider?: IamTokenProvider;
}

/** `KAFKA_MIRROR_SOURCE_USERNAME` and `..._PASSWORD` (TARGET for the target). */
export function credentialVariables(side: ClusterSide): { username: string; password: string } {
  const prefix = `KAFKA_MIRROR_${side.toUpperCase()}`;
  return { username: `${prefix}_USERNAME`, password: `${prefix}_PASSWORD` };
}

/** Throws ReplicatorError CONFIG_INVALID naming the field, file or variable at fault. */
export async function clusterSecurityOptions(
  cluster: ClusterConfig,
  side: ClusterSide,
  inputs: SecurityInputs = {},
): Promise<KafkaSecurityOptions> {
  const saslMechanism = cluster.saslMechanism ?? "none";
  const usesPassword = saslMechanism === "plain" || saslMechanism.startsWith("scram");
  const fromSecret =
    cluster.secretArn === undefined ? {} : await secretCredentials(cluster.secretArn, side, inputs);
  const password = usesPassword ? await passwordCredentials(cluster, side, inputs, fromSecret) : {};
  const credentials: ClusterCredentials = { ...fromSecret, ...password, ...(await tlsFiles(cluster, side)) };
  try {
    return kafkaSecurityOptions(
      {
        tls: cluster.tls,
        saslMechanism,
        credentials,
        ...(inputs.region === undefined ? {} : { region: inputs.region }),
      },
      inputs.iamTokenProvider,
    );
  } catch (error) {
    if (error instanceof ReplicatorError) throw invalid(`${side}: ${error.message}`, { cause: error });
    throw error;
  }
}

async function secretCredentials(
  secretArn: string,
  side: ClusterSide,
  inputs: SecurityInputs,
): Promise<ClusterCredentials> {
  if (inputs.secrets === undefined) {
    throw invalid(`${side}.secretArn is set but no Secrets Manager client was given to read it`);
  }
  const secret = await inputs.secrets.json(secretArn, { fresh: inputs.fresh ?? false });
  return parseClusterCredentials(secret, secretArn);
}

async function passwordCredentials(
  cluster: ClusterConfig,
  side: ClusterSide,
  inputs: SecurityInputs,
  fromSecret: ClusterCredentials,
): Promise<{ username: string; password: string }> {
  const names = credentialVariables(side);
  const username = inputs.env?.[names.username];
  const password = inputs.env?.[names.password];
  if (username || password) {
    if (!username || !password) {
      const missing = username ? names.password : names.username;
      throw invalid(`${missing} is unset or empty: set both ${names.username} and ${names.password}`);
    }
    return { username, password };
  }
  if (cluster.credentialsFile !== undefined) return credentialsFile(cluster.credentialsFile, side);
  if (fromSecret.username && fromSecret.password) {
    return { username: fromSecret.username, password: fromSecret.password };
  }
  const where =
    cluster.secretArn === undefined ? "" : ` (secret ${cluster.secretArn} has no username and password)`;
  throw invalid(
    `${side}.saslMechanism ${cluster.saslMechanism} needs a username and password${where}: set ` +
      `${names.username} and ${names.password}, or ${side}.credentialsFile, or ${side}.secretArn`,
  );
}

async function credentialsFile(
  path: string,
  side: ClusterSide,
): Promise<{ username: string; password: string }> {
  const field = `${side}.credentialsFile`;
  const text = await readText(path, field);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // The parser's message may quote the file's text, the password included: leave it out.
    throw invalid(`${field} ${path} is not valid JSON; expected {"username": "...", "password": "..."}`);
  }
  const record = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? parsed : {};
  const { username, password, ...rest } = record as Record<string, unknown>;
  const problems = [
    ...(typeof username === "string" && username !== "" ? [] : ['"username" must be a non-empty string']),
    ...(typeof password === "string" && password !== "" ? [] : ['"password" must be a non-empty string']),
    ...Object.keys(rest).map((key) => `unknown key "${key}"; allowed: username, password`),
  ];
  if (problems.length > 0 || typeof username !== "string" || typeof password !== "string") {
    throw invalid(`${field} ${path}: ${problems.join("; ")}`);
  }
  return { username, password };
}

async function tlsFiles(cluster: ClusterConfig, side: ClusterSide): Promise<ClusterCredentials> {
  const read = async (field: "tlsCaFile" | "tlsCertFile" | "tlsKeyFile") => {
    const path = cluster[field];
    return path === undefined ? undefined : readText(path, `${side}.${field}`);
  };
  const [ca, cert, key] = await Promise.all([read("tlsCaFile"), read("tlsCertFile"), read("tlsKeyFile")]);
  return {
    ...(ca === undefined ? {} : { ca }),
    ...(cert === undefined ? {} : { cert }),
    ...(key === undefined ? {} : { key }),
  };
}

async function readText(path: string, field: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    const why = fileErrorReason(error);
    throw invalid(`cannot read ${field} ${path}: ${why}`, { cause: error });
  }
}

function invalid(message: string, options: { cause?: unknown } = {}): ReplicatorError {
  return new ReplicatorError("CONFIG_INVALID", message, options);
}

/** Both sides' options, for callers that connect to both clusters. */
export async function clusterSecurityOfBothSides(
  config: { readonly source: ClusterConfig; readonly target: ClusterConfig },
  inputs: SecurityInputs = {},
): Promise<ClusterSecurity> {
  const [source, target] = await Promise.all([
    clusterSecurityOptions(config.source, "source", inputs),
    clusterSecurityOptions(config.target, "target", inputs),
  ]);
  return { source, target };
}
