/**
 * What both functions build once per container (cold start): the config from environment
 * variables, the logger, the DynamoDB client, and each cluster's TLS/SASL options with
 * credentials read from Secrets Manager. Nothing here is logged that could hold a secret.
 */
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import middy from "@middy/core";
import type { Context } from "aws-lambda";
import { NODE_FLAGS_VARIABLE } from "../infra/node-flags.js";
import { loadConfigFromEnv } from "../lib/config/load.js";
import type { MirrorConfig } from "../lib/config/schema.js";
import { ReplicatorError } from "../lib/errors.js";
import { EmfMetrics } from "../lib/observability/emf-metrics.js";
import { flushMetrics } from "../lib/observability/flush-metrics.js";
import { PowertoolsLoggerAdapter } from "../lib/observability/powertools-logger.js";
import { type ClusterSecurity, clusterSecurityOfBothSides } from "../lib/secrets/cluster-security.js";
import { type Closeable, RefreshOnAuthFailure } from "../lib/secrets/credential-refresh.js";
import { SecretCache } from "../lib/secrets/secret-cache.js";
import { ADAPTER_VARIABLES, leaseDynamoDbClient } from "../lib/wiring.js";
import { FUNCTIONS, type FunctionName } from "./table.js";

/** Not config fields, read by the functions themselves. */
export const STALL_AFTER_VARIABLE = "KAFKA_MIRROR_STALL_AFTER_MS";
/** The replication tick in seconds, set by the stack on `replicate`: when its runs drain. */
export const TICK_SECONDS_VARIABLE = "KAFKA_MIRROR_TICK_SECONDS";
/** The functions' `KAFKA_MIRROR_*` variables that name no config field (node's flags: the exec wrapper's). */
export const NON_CONFIG_VARIABLES: readonly string[] = [
  STALL_AFTER_VARIABLE,
  TICK_SECONDS_VARIABLE,
  NODE_FLAGS_VARIABLE,
  ...ADAPTER_VARIABLES,
];

export interface Runtime {
  readonly config: MirrorConfig;
  readonly logger: PowertoolsLoggerAdapter;
  readonly dynamodb: DynamoDBClient;
  readonly security: ClusterSecurity;
  /** The security options again with the secrets read afresh (past the cache): after a rotation. */
  rereadSecurity(): Promise<ClusterSecurity>;
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
  const config = loadConfigFromEnv(env, { otherVariables: NON_CONFIG_VARIABLES });
  requireSecretForPasswords(config);
  const region = env.AWS_REGION;
  const needsSecrets = config.source.secretArn !== undefined || config.target.secretArn !== undefined;
  const secrets = needsSecrets ? new SecretCache({ client: new SecretsManagerClient({}) }) : undefined;
  // No env: the functions take passwords from Secrets Manager only.
  const readSecurity = (fresh: boolean) =>
    clusterSecurityOfBothSides(config, {
      fresh,
      ...(secrets === undefined ? {} : { secrets }),
      ...(region === undefined ? {} : { region }),
    });
  const { source, target } = await readSecurity(false);
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
    dynamodb: leaseDynamoDbClient(config),
    security: { source, target },
    rereadSecurity: () => readSecurity(true),
    serviceName: serviceName(env),
  };
}

/**
 * The functions read PLAIN/SCRAM credentials from Secrets Manager only (no files or variables in
 * Lambda), so those mechanisms need secretArn here even though the CLI has other sources.
 */
function requireSecretForPasswords(config: MirrorConfig): void {
  const issues = (["source", "target"] as const).flatMap((side) => {
    const { saslMechanism = "none", secretArn, credentialsFile } = config[side];
    const usesPassword = saslMechanism === "plain" || saslMechanism.startsWith("scram");
    return [
      ...(usesPassword && secretArn === undefined
        ? [
            {
              path: `${side}.secretArn`,
              message: `required with saslMechanism ${saslMechanism}: the secret holds the username and password`,
            },
          ]
        : []),
      ...(credentialsFile === undefined
        ? []
        : [{ path: `${side}.credentialsFile`, message: "not read by the functions: use secretArn" }]),
    ];
  });
  if (issues.length > 0) {
    throw new ReplicatorError(
      "CONFIG_INVALID",
      `invalid config: ${issues.map((issue) => `${issue.path}: ${issue.message}`).join("; ")}`,
      { details: { issues } },
    );
  }
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

/** What every handler is given besides its event: the logger and metrics built at cold start. */
export interface FunctionParts {
  readonly logger: PowertoolsLoggerAdapter;
  readonly metrics: EmfMetrics;
}

/**
 * THE wiring of a scheduled function, middy style: logger and metrics at cold start, the runtime
 * (config, DynamoDB client, cluster security) once per container, the connected clients kept
 * warm and rebuilt once with the secrets re-read when a cluster refuses our credentials (rotation),
 * then `invoke` as the handler. Lambda context and metrics flushing are middleware. `name` is the
 * function's entry in functions/table.ts.
 */
export function scheduledFunction<R extends Closeable, T>(
  name: FunctionName,
  connect: (runtime: Runtime, security: ClusterSecurity, parts: FunctionParts) => R | Promise<R>,
  invoke: (resource: R, context: Context, parts: FunctionParts, event: unknown) => Promise<T>,
) {
  const logger = new PowertoolsLoggerAdapter();
  const parts: FunctionParts = { logger, metrics: new EmfMetrics({ serviceName: serviceName() }) };
  const runtime = once(() => createRuntime(logger));
  const connected = new RefreshOnAuthFailure(async (fresh) => {
    const built = await runtime();
    return connect(built, fresh ? await built.rereadSecurity() : built.security, parts);
  }, logger);
  return middy<unknown, T, Error, Context>()
    .use(injectLambdaContext(logger.powertools))
    .use(flushMetrics(parts.metrics))
    .handler((event: unknown, context: Context) => {
      refuseOtherSchedules(name, event);
      return connected.use((resource) => invoke(resource, context, parts, event));
    });
}

/**
 * A schedule's event names the function it was written for (functions/table.ts). One sent to
 * another function (a rule edited by hand, a target swapped) would run that function with the
 * wrong slot and tick, so it is refused before anything connects. Events without a `kind`
 * (a manual test invoke) run.
 */
export function refuseOtherSchedules(name: FunctionName, event: unknown): void {
  const kind = typeof event === "object" && event !== null ? (event as { kind?: unknown }).kind : undefined;
  const expected = FUNCTIONS[name].schedule.kind;
  if (kind === undefined || kind === expected) return;
  throw new ReplicatorError(
    "CONFIG_INVALID",
    `function ${name} was invoked by a schedule of kind ${JSON.stringify(kind)}; it takes only "${expected}" (see functions/table.ts) or an event without a kind`,
    { details: { function: name, kind } },
  );
}
