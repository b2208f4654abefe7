/** What every command that talks to the clusters needs, opened in order and closed in reverse. */
import type { MirrorConfig } from "../../config/schema.js";
import { systemClock } from "../../core/clock.js";
import type { Clock, Logger } from "../../core/ports.js";
import { DEFAULT_PROVENANCE_HEADER } from "../../core/provenance.js";
import type { KafkaRetry } from "../../core/retry.js";
import { retryingAdmin, retryingReader } from "../../core/retrying-ports.js";
import { describeError } from "../../errors.js";
import { topicSelectorOf } from "../../replicator.js";
import type { TopicSelector } from "../../topics/selection.js";
import type { LeaseStoreKind } from "../../wiring.js";
import { CliLogger, type LogFormat } from "../cli-logger.js";
import { type ClusterHandle, type ClusterSecurity, clusterSecurity, openCluster } from "../clusters.js";
import { loadConfigFile } from "../config-file.js";
import type { CliIo } from "../console.js";

export interface GlobalOptions {
  readonly config: string;
  readonly json: boolean;
  readonly debug: boolean;
  /** `--log-format`: text lines, or the functions' JSON. @default text */
  readonly logFormat?: LogFormat;
  readonly stateDir: string;
  readonly leaseStore: LeaseStoreKind;
  readonly signal: AbortSignal;
}

export interface Clusters {
  readonly config: MirrorConfig;
  readonly logger: CliLogger;
  readonly mapping: TopicSelector;
  /** Each side's TLS and SASL options, for connections the command opens itself. */
  readonly security: ClusterSecurity;
  /** Admin and reader whose calls are retried as `retry` says (see commandRetry). */
  readonly source: ClusterHandle;
  readonly target: ClusterHandle;
  /** The command's retry policy, for clients it opens itself. */
  readonly retry: KafkaRetry;
  close(): Promise<void>;
}

/**
 * How long one Kafka call of a command may be retried after transient failures (a broker
 * restarting, a leader moving), in request timeouts of the slower side. Counted from each call's
 * start, so a long verify keeps its retries to its last read; Ctrl-C (the signal) ends them.
 */
export const COMMAND_RETRY_REQUEST_TIMEOUTS = 3;

export function commandRetry(
  config: MirrorConfig,
  logger: Logger,
  signal?: AbortSignal,
  clock: Clock = systemClock,
): KafkaRetry {
  const budgetMs =
    COMMAND_RETRY_REQUEST_TIMEOUTS * Math.max(config.source.requestTimeoutMs, config.target.requestTimeoutMs);
  return {
    clock,
    deadline: () => clock.now() + budgetMs,
    ...(signal === undefined ? {} : { signal }),
    onRetry: (what, error, attempt, delayMs) =>
      logger.warn(`${what} failed, retrying`, { attempt, delayMs, ...describeError(error) }),
  };
}

/** The handle's admin and reader retried per `retry`; closing closes the handle. */
export function withRetries(handle: ClusterHandle, retry: KafkaRetry): ClusterHandle {
  return {
    admin: retryingAdmin(handle.admin, retry),
    reader: retryingReader(handle.reader, retry),
    close: () => handle.close(),
  };
}

export async function openClusters(options: GlobalOptions, io: CliIo): Promise<Clusters> {
  const config = await loadConfigFile(options.config);
  const security = await clusterSecurity(config);
  const logger = new CliLogger(io, { debug: options.debug, format: options.logFormat });
  const mapping = topicSelectorOf(config);
  const source = await openCluster(config, "source", logger, security.source);
  let target: ClusterHandle;
  try {
    target = await openCluster(config, "target", logger, security.target);
  } catch (error) {
    await source.close();
    throw error;
  }
  const retry = commandRetry(config, logger, options.signal);
  return {
    config,
    logger,
    mapping,
    security,
    source: withRetries(source, retry),
    target: withRetries(target, retry),
    retry,
    async close() {
      await Promise.allSettled([source.close(), target.close()]);
    },
  };
}

/**
 * The header the workers append to every copy (provenance), which verify must not count as a
 * difference; undefined when the config turns it off or predates it.
 */
export function mirrorHeaderOf(config: MirrorConfig): Buffer | undefined {
  const provenance = (config as { provenance?: { enabled?: boolean; header?: string } }).provenance;
  if (provenance === undefined || provenance.enabled === false) return undefined;
  return Buffer.from(provenance.header ?? DEFAULT_PROVENANCE_HEADER);
}
