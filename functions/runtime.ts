/**
 * What both functions build once per container (cold start): the config from environment
 * variables, the logger, the DynamoDB client, and each cluster's TLS/SASL options with
 * credentials read from Secrets Manager. Nothing here is logged that could hold a secret.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import { loadConfigFromEnv } from "../lib/config/load.js";
import { leaseRequestTimeoutMs, type MirrorConfig } from "../lib/config/schema.js";
import { createDynamoDbClient } from "../lib/dynamodb/client.js";
import { type KafkaSecurityOptions, kafkaSecurityOptions } from "../lib/kafka/security.js";
import type { PowertoolsLoggerAdapter } from "../lib/observability/powertools-logger.js";
import { parseClusterCredentials } from "../lib/secrets/cluster-credentials.js";
import { SecretCache } from "../lib/secrets/secret-cache.js";

/** Not config fields, read by the functions themselves. */
export const STALL_AFTER_VARIABLE = "KAFKA_MIRROR_STALL_AFTER_MS";

export interface Runtime {
  readonly config: MirrorConfig;
  readonly logger: PowertoolsLoggerAdapter;
  readonly dynamodb: DynamoDBClient;
  readonly security: { readonly source: KafkaSecurityOptions; readonly target: KafkaSecurityOptions };
  /** Metric `service` dimension: the stack sets POWERTOOLS_SERVICE_NAME. */
  readonly serviceName: string;
}

/** Metric `service` dimension and log `service` key; the stack sets it per region. */
export function serviceName(env: NodeJS.ProcessEnv = process.env): string {
  return env.POWERTOOLS_SERVICE_NAME ?? "kafka-mirror";
}

export async function createRuntime(
  logger: PowertoolsLoggerAdapter,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Runtime> {
  const config = loadConfigFromEnv(env, { otherVariables: [STALL_AFTER_VARIABLE] });
  const region = env.AWS_REGION;
  const needsSecrets = config.source.secretArn !== undefined || config.target.secretArn !== undefined;
  const secrets = needsSecrets ? new SecretCache({ client: new SecretsManagerClient({}) }) : undefined;
  const securityOf = async (side: MirrorConfig["source"] | MirrorConfig["target"]) => {
    const credentials =
      side.secretArn === undefined || secrets === undefined
        ? undefined
        : parseClusterCredentials(await secrets.json(side.secretArn), side.secretArn);
    return kafkaSecurityOptions({
      tls: side.tls,
      saslMechanism: side.saslMechanism ?? "none",
      ...(credentials === undefined ? {} : { credentials }),
      ...(region === undefined ? {} : { region }),
    });
  };
  const [source, target] = await Promise.all([securityOf(config.source), securityOf(config.target)]);
  logger.info("configuration loaded", {
    sourceBrokers: config.source.brokers,
    targetBrokers: config.target.brokers,
    whitelist: config.topics.whitelist ?? null,
    blacklist: config.topics.blacklist ?? null,
    table: config.leases.table,
    sourceSecurity: { tls: config.source.tls, sasl: config.source.saslMechanism ?? "none" },
    targetSecurity: { tls: config.target.tls, sasl: config.target.saslMechanism ?? "none" },
  });
  return {
    config,
    logger,
    // The SDK picks up region, credentials and AWS_ENDPOINT_URL_DYNAMODB from the environment.
    dynamodb: createDynamoDbClient({ requestTimeoutMs: leaseRequestTimeoutMs(config.leases) }),
    security: { source, target },
    serviceName: serviceName(env),
  };
}

/** Builds once per container; a failed build is retried by the next invocation. */
export function once<T>(build: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    pending ??= build().catch((error: unknown) => {
      pending = undefined;
      throw error;
    });
    return pending;
  };
}
