/**
 * Connections to the two clusters for the CLI, and the reachability check every command makes
 * first, so an unreachable broker is one message naming the side, the addresses and the timeout
 * instead of retries and a stack trace.
 */
import type { MirrorConfig } from "../config/schema.js";
import type { ClusterAdmin, Logger, SourceReader } from "../core/ports.js";
import { KafkaClusterAdmin } from "../kafka/cluster-admin.js";
import type { KafkaConnectionOptions } from "../kafka/connection.js";
import { KafkaSourceReader } from "../kafka/source-reader.js";
import { CliError, ExitCode } from "./cli-error.js";

export type Side = "source" | "target";

export function connectionOptions(config: MirrorConfig, side: Side, logger: Logger): KafkaConnectionOptions {
  const c = config[side];
  return {
    brokers: c.brokers,
    clientId: c.clientId,
    connectionTimeoutMs: c.connectionTimeoutMs,
    requestTimeoutMs: c.requestTimeoutMs,
    logger,
  };
}

/**
 * The CLI connects without TLS or SASL for now: credentials come from Secrets Manager through the
 * functions' wiring. Connecting in plaintext to a cluster configured for TLS would be wrong, so
 * such a config is refused by name.
 */
export function assertPlainConnections(config: MirrorConfig): void {
  const problems: string[] = [];
  for (const side of ["source", "target"] as const) {
    const c = config[side];
    if (c.tls) problems.push(`${side}.tls`);
    if (c.saslMechanism !== undefined && c.saslMechanism !== "none") problems.push(`${side}.saslMechanism`);
    if (c.secretArn !== undefined) problems.push(`${side}.secretArn`);
  }
  if (problems.length > 0) {
    throw new CliError(
      `the kafka-mirror CLI connects in plaintext only; it does not support ${problems.join(", ")} yet`,
      ExitCode.BAD_INPUT,
    );
  }
}

export interface ClusterHandle {
  readonly admin: ClusterAdmin;
  readonly reader: SourceReader;
  close(): Promise<void>;
}

/** Opens admin and reader for one side, after checking that it answers. */
export async function openCluster(config: MirrorConfig, side: Side, logger: Logger): Promise<ClusterHandle> {
  await probeCluster(config, side, logger);
  const options = connectionOptions(config, side, logger);
  const admin = new KafkaClusterAdmin(options);
  const reader = new KafkaSourceReader(options);
  return {
    admin,
    reader,
    async close() {
      await Promise.allSettled([admin.close(), reader.close()]);
    },
  };
}

/** One metadata request with no retries; fails with the addresses and the timeout that applied. */
export async function probeCluster(config: MirrorConfig, side: Side, logger: Logger): Promise<void> {
  // No logger: kafkajs would log each refused connection, and the error below says it all once.
  const { logger: _unused, ...options } = connectionOptions(config, side, logger);
  const probe = new KafkaClusterAdmin({ ...options, maxAttempts: 1 });
  const timeoutMs = config[side].connectionTimeoutMs + config[side].requestTimeoutMs;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe.listTopics(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new CliError(
      `cannot reach the ${side} cluster at ${config[side].brokers.join(",")} ` +
        `(connection timeout ${config[side].connectionTimeoutMs} ms, ${side}.connectionTimeoutMs): ${reason}`,
      ExitCode.UNREACHABLE,
      { cause: error },
    );
  } finally {
    clearTimeout(timer);
    await probe.close().catch(() => undefined);
  }
}
