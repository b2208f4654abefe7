/**
 * The composition root: turns a parsed config into a ready Worker with its Kafka adapters and
 * its lease store (over DynamoDB, or over this process's memory). The Lambda handlers, the CLI
 * and the integration tests all build workers and lease stores here, so each is wired one way.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  type ClusterConfig,
  DEFAULT_SOURCE_ALIAS,
  type MirrorConfig,
  writeSafetyMarginMs,
} from "./config/schema.js";
import { systemClock } from "./core/clock.js";
import { MemoryLeaseTable } from "./core/lease/memory-table.js";
import { TableLeaseStore } from "./core/lease/store.js";
import type { ConfigSyncPolicy } from "./core/plan/config-sync.js";
import type { Clock, LeaseStore, Logger, ReplicationMetrics, TargetWriter } from "./core/ports.js";
import type { ProvenanceSettings } from "./core/provenance.js";
import { transactionTimeoutBounds } from "./core/run/transaction-timeout.js";
import { Worker } from "./core/run/worker.js";
import type { WorkerSettings } from "./core/run/worker-settings.js";
import { DynamoDbLeaseTable } from "./dynamodb/lease-table-port.js";
import { KafkaClusterAdmin } from "./kafka/admin/cluster-admin.js";
import { KafkaTargetWriter } from "./kafka/produce/target-writer.js";
import { KafkaSourceReader } from "./kafka/read/source-reader.js";
import type { KafkaConnectionOptions } from "./kafka/wire/connection.js";
import type { KafkaSecurityOptions } from "./kafka/wire/security.js";
import { createTopicSelector, type TopicSelector } from "./topics/selection.js";

/**
 * Where the leases live: exactly one of the two. `dynamodb`: the table `leases.table`, through a
 * client built once by the caller (cold start) with its endpoint, timeouts and retries. `memory`:
 * a table in this process, for one process alone (`run --lease-store memory`); it is gone when
 * the process is.
 */
export type LeaseBackend =
  | { readonly dynamodb: DynamoDBClient; readonly memory?: never }
  | { readonly memory: MemoryLeaseTable; readonly dynamodb?: never };

/** A fresh in-memory lease table for one process (LeaseBackend `memory`). */
export function memoryLeaseBackend(): LeaseBackend {
  return { memory: new MemoryLeaseTable() };
}

/** THE lease store of a config over `backend`; `observers` hear of lease items it skips. */
export function createLeaseStore(
  config: Pick<MirrorConfig, "leases">,
  backend: LeaseBackend,
  observers: {
    readonly logger?: Logger | undefined;
    readonly metrics?: Pick<ReplicationMetrics, "leaseItemSkipped"> | undefined;
    readonly clock?: Clock | undefined;
  } = {},
): LeaseStore {
  const table =
    backend.memory !== undefined
      ? backend.memory
      : new DynamoDbLeaseTable({ client: backend.dynamodb, tableName: config.leases.table });
  return new TableLeaseStore({ table, ...observers });
}

export type ReplicatorDependencies = LeaseBackend & {
  readonly logger: Logger;
  readonly metrics: ReplicationMetrics;
  /** @default config.worker.id, else `<hostname>-<pid>-<random>` */
  readonly workerId?: string;
  /** @default the system clock */
  readonly clock?: Clock;
  /**
   * TLS and SASL options per cluster, built by `clusterSecurityOfBothSides`
   * (lib/secrets/cluster-security.ts) from the config. @default plaintext, no SASL
   */
  readonly security?: {
    readonly source?: KafkaSecurityOptions;
    readonly target?: KafkaSecurityOptions;
  };
  /**
   * Wraps the target writer the worker uses, for fault injection (the chaos run kills its own
   * process right after a write was acknowledged, before its checkpoint). @default none
   */
  readonly decorateTarget?: (writer: TargetWriter) => TargetWriter;
};

export interface Replicator {
  readonly workerId: string;
  readonly worker: Worker;
  /**
   * Another worker over the same connections, for one run of a slot: a Lambda container serves
   * whichever schedule slot invokes it, and the CLI overlaps its rounds.
   */
  workerFor(identity: { readonly workerId: string; readonly slot: string }): Worker;
  /** Closes every connection the replicator opened; the lease backend stays the caller's. */
  close(): Promise<void>;
}

/** A worker id that stays unique across hosts, processes and restarts of the same process. */
export function defaultWorkerId(): string {
  return `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
}

/** Exactly-once settings from the config, or null when provenance is off (at-least-once). */
export function provenanceSettings(config: MirrorConfig): ProvenanceSettings | null {
  if (!config.provenance.enabled) return null;
  return {
    header: Buffer.from(config.provenance.header, "ascii"),
    sourceAlias: config.source.alias,
    targetAlias: config.target.alias ?? null,
  };
}

export function workerSettings(config: MirrorConfig): WorkerSettings {
  return {
    batch: {
      maxRecords: config.batch.maxRecords,
      maxBytes: config.batch.maxBytes,
      maxWaitMs: config.batch.maxWaitMs,
    },
    leases: {
      durationMs: config.leases.durationMs,
      renewIntervalMs: config.leases.renewIntervalMs,
      rebalanceIntervalMs: config.leases.rebalanceIntervalMs,
      checkpointIntervalMs: config.leases.checkpointIntervalMs,
      maxClaimsPerRound: config.leases.maxClaimsPerRound,
    },
    startFrom: config.worker.startFrom,
    replicationFactor: config.target.replicationFactor,
    writeSafetyMarginMs: writeSafetyMarginMs(config),
    provenance: provenanceSettings(config),
    readAheadBytes: config.batch.readAheadBytes,
    discoveryIntervalMs: config.topics.discoveryIntervalMs,
    configSync: configSyncPolicy(config),
  };
}

/** THE config sync policy of a config (the workers apply it, `plan` shows it). */
export function configSyncPolicy(config: MirrorConfig): ConfigSyncPolicy {
  return {
    enabled: config.topics.configSync,
    allow: config.topics.configSyncAllow,
    deny: config.topics.configSyncDeny,
  };
}

/**
 * THE Kafka connection options of one cluster side: addresses, client id, timeouts, and the TLS
 * and SASL options `clusterSecurityOptions` (lib/secrets/cluster-security.ts) built from it.
 */
export function kafkaConnectionOptions(
  cluster: ClusterConfig,
  logger: Logger | undefined,
  security: KafkaSecurityOptions = {},
): KafkaConnectionOptions {
  return {
    brokers: cluster.brokers,
    clientId: cluster.clientId,
    connectionTimeoutMs: cluster.connectionTimeoutMs,
    requestTimeoutMs: cluster.requestTimeoutMs,
    ...(logger === undefined ? {} : { logger }),
    ...security,
  };
}

/** THE topic selector of a config: which source topics to copy, and under which target names. */
export function topicSelectorOf(config: MirrorConfig): TopicSelector {
  return createTopicSelector({
    whitelist: config.topics.whitelist,
    blacklist: config.topics.blacklist,
    rename: config.topics.rename,
    sourceAlias: config.source.alias,
    targetAlias: config.target.alias,
  });
}

export function createReplicator(config: MirrorConfig, deps: ReplicatorDependencies): Replicator {
  const workerId = deps.workerId ?? config.worker.id ?? defaultWorkerId();
  const { logger } = deps;
  warnOnSharedAlias(config, logger);
  const clock = deps.clock ?? systemClock;
  const sourceOptions = kafkaConnectionOptions(config.source, logger, deps.security?.source);
  const targetOptions = kafkaConnectionOptions(config.target, logger, deps.security?.target);
  // One clock for the worker and every adapter, so deadlines and lease expiries agree.
  const source = new KafkaSourceReader({ ...sourceOptions, clock });
  const target = createTargetWriter(config, targetOptions, clock);
  const targetReader = config.provenance.enabled
    ? new KafkaSourceReader({ ...targetOptions, clock })
    : undefined;
  const sourceAdmin = new KafkaClusterAdmin({ ...sourceOptions, clock });
  const targetAdmin = new KafkaClusterAdmin({ ...targetOptions, clock });
  const leases = createLeaseStore(config, deps, { logger, metrics: deps.metrics, clock });
  const makeWorker = (identity: { readonly workerId: string; readonly slot?: string }) =>
    new Worker({
      ...identity,
      source,
      target: deps.decorateTarget?.(target) ?? target,
      sourceAdmin,
      targetAdmin,
      ...(targetReader === undefined ? {} : { targetReader }),
      leases,
      mapping: topicSelectorOf(config),
      settings: workerSettings(config),
      clock,
      logger,
      metrics: deps.metrics,
    });
  const worker = makeWorker({ workerId });
  const closeables = [
    source,
    target,
    sourceAdmin,
    targetAdmin,
    ...(targetReader === undefined ? [] : [targetReader]),
  ];
  return { workerId, worker, workerFor: makeWorker, close: () => closeAll(closeables, logger) };
}

function warnOnSharedAlias(config: MirrorConfig, logger: Logger): void {
  if (!config.provenance.enabled || config.source.alias !== DEFAULT_SOURCE_ALIAS) return;
  logger.warn("source.alias is the default; set a name unique to this source cluster", {
    sourceAlias: config.source.alias,
    why:
      "exactly-once takes target records carrying this alias for its own: another replicator on the " +
      "default alias writing to the same target topics would make this one skip records it never copied",
  });
}

function createTargetWriter(
  config: MirrorConfig,
  options: KafkaConnectionOptions,
  clock: Clock,
): KafkaTargetWriter {
  return new KafkaTargetWriter({
    ...options,
    compression: config.target.compression,
    maxBatchBytes: config.target.maxBatchBytes,
    maxBatchRecords: config.batch.maxRecords,
    maxInFlightBatches: config.target.maxInFlightBatches,
    // The pump's write deadline (the lease's expiry) bounds every request of a write, retries
    // included; this bounds one batch's retries for writes without one. A batch that may have
    // landed is resent only as it was (same producer id and sequence), which the broker
    // de-duplicates, in both delivery modes; in exactly-once mode a write whose outcome stays
    // unknown makes the pump read the target's tail before writing again. (Pipelined batches
    // rely on the broker refusing out-of-sequence batches; see maxInFlightBatches.)
    retryDeadlineMs: config.target.requestTimeoutMs,
    // Deadlines are lease expiries, taken on the worker's clock.
    clock,
    transactions:
      config.target.fencing === "transactional"
        ? {
            alias: config.source.alias,
            // Until each run settles it against the target brokers' cap (transaction-timeout.ts).
            transactionTimeoutMs: transactionTimeoutBounds({
              leases: config.leases,
              writeSafetyMarginMs: writeSafetyMarginMs(config),
            }).wantedMs,
          }
        : null,
  });
}

async function closeAll(closeables: readonly { close(): Promise<void> }[], logger: Logger): Promise<void> {
  const results = await Promise.allSettled(closeables.map((c) => c.close()));
  const failed = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed.length > 0) {
    logger.warn("closing Kafka connections failed", {
      errors: failed.map((f) => String((f.reason as Error)?.message ?? f.reason)),
    });
  }
}
