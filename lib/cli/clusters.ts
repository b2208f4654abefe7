/**
 * Connections to the two clusters for the CLI, and the reachability check every command makes
 * first, so an unreachable broker (or refused credentials) is one message naming the side instead
 * of retries and a stack trace.
 */
import { SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import type { MirrorConfig } from "../config/schema.js";
import type { ClusterAdmin, Logger, SourceReader } from "../core/ports.js";
import { isAuthenticationFailure, type KafkaSecurityOptions } from "../kafka/wire/security.js";
import {
  type ClusterSecurity,
  type ClusterSide,
  clusterSecurityOfBothSides,
} from "../secrets/cluster-security.js";
import { SecretCache } from "../secrets/secret-cache.js";
import { clusterSide } from "../wiring.js";
import { CliError, ExitCode } from "./cli-error.js";

export type Side = ClusterSide;
export type { ClusterSecurity };

/**
 * Each side's TLS and SASL options, as the functions build them: PEM files from the config,
 * passwords from KAFKA_MIRROR_<SIDE>_USERNAME/PASSWORD, `credentialsFile` or `secretArn` (Secrets
 * Manager, default AWS credential chain), MSK IAM signed for AWS_REGION.
 */
export async function clusterSecurity(
  config: MirrorConfig,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ClusterSecurity> {
  const needsSecrets = config.source.secretArn !== undefined || config.target.secretArn !== undefined;
  const region = env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
  return clusterSecurityOfBothSides(config, {
    env,
    ...(needsSecrets ? { secrets: new SecretCache({ client: new SecretsManagerClient({}) }) } : {}),
    ...(region === undefined ? {} : { region }),
  });
}

export interface ClusterHandle {
  readonly admin: ClusterAdmin;
  readonly reader: SourceReader;
  close(): Promise<void>;
}

/** Opens admin and reader for one side, after checking that it answers. */
export async function openCluster(
  config: MirrorConfig,
  side: Side,
  logger: Logger,
  security: KafkaSecurityOptions = {},
): Promise<ClusterHandle> {
  await probeCluster(config, side, security);
  const adapters = clusterSide(config, side, { logger, security });
  const admin = adapters.admin();
  const reader = adapters.reader();
  return {
    admin,
    reader,
    async close() {
      await Promise.allSettled([admin.close(), reader.close()]);
    },
  };
}

/**
 * One metadata request with no retries; fails with the addresses and the timeout that applied,
 * or, when the broker refused our credentials, with one line naming the side and the mechanism.
 */
export async function probeCluster(
  config: MirrorConfig,
  side: Side,
  security: KafkaSecurityOptions = {},
): Promise<void> {
  // No logger: kafkajs would log each refused connection, and the error below says it all once.
  const probe = clusterSide(config, side, { security }).admin();
  const timeoutMs = config[side].connectionTimeoutMs + config[side].requestTimeoutMs;
  const startedAt = Date.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe.listTopics(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } catch (error) {
    throw unreachable(config, side, error, { elapsedMs: Date.now() - startedAt, timeoutMs });
  } finally {
    clearTimeout(timer);
    await probe.close().catch(() => undefined);
  }
}

/** The attempts the client made, when its error says (kafkajs's retryCount, in the cause chain). */
function attemptsOf(error: unknown): number | undefined {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    const retries = (e as { retryCount?: unknown }).retryCount;
    if (typeof retries === "number" && Number.isSafeInteger(retries)) return retries + 1;
  }
  return undefined;
}

function unreachable(
  config: MirrorConfig,
  side: Side,
  error: unknown,
  took: { readonly elapsedMs: number; readonly timeoutMs: number },
): CliError {
  const reason = error instanceof Error ? error.message : String(error);
  if (isAuthenticationFailure(error)) {
    const mechanism = config[side].saslMechanism ?? "none";
    return new CliError(
      `authentication to the ${side} cluster at ${config[side].brokers.join(",")} failed ` +
        `(${side}.saslMechanism ${mechanism}): ${reason}`,
      ExitCode.UNREACHABLE,
      { cause: error },
    );
  }
  // The per-attempt timeout alone read as a contradiction after 31 s of retries: say all three.
  const attempts = attemptsOf(error);
  return new CliError(
    `cannot reach the ${side} cluster at ${config[side].brokers.join(",")} after ` +
      `${(took.elapsedMs / 1000).toFixed(1)} s${attempts === undefined ? "" : ` and ${attempts} attempt${attempts === 1 ? "" : "s"}`} ` +
      `(${side}.connectionTimeoutMs ${config[side].connectionTimeoutMs} ms per connection attempt; ` +
      `the check gives up after ${took.timeoutMs} ms, connectionTimeoutMs + requestTimeoutMs): ${reason}`,
    ExitCode.UNREACHABLE,
    { cause: error },
  );
}
