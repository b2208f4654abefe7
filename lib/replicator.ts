/**
 * The worker's composition: turns a parsed config into a ready Worker over the adapters of both
 * cluster sides and its lease store, all built by the composition module (lib/wiring.ts). The
 * Lambda handler, the CLI's `run` and the demo build their workers here, so each is wired one way.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import {
  DEFAULT_SOURCE_ALIAS,
  type MirrorConfig,
  writeMaxBytes,
  writeSafetyMarginMs,
} from "./config/schema.js";
import { systemClock } from "./core/clock.js";
import type { ConfigSyncPolicy } from "./core/plan/config-sync.js";
import type { Clock, Logger, ReplicationMetrics, TargetWriter } from "./core/ports.js";
import type { ProvenanceSettings } from "./core/provenance.js";
import { Worker } from "./core/run/worker.js";
import type { WorkerSettings } from "./core/run/worker-settings.js";
import type { KafkaSecurityOptions } from "./kafka/wire/security.js";
import { createTopicSelector, type TopicSelector } from "./topics/selection.js";
import { clusterSide, createLeaseStore, type LeaseBackend, logCrc32cImplementation } from "./wiring.js";

export type ReplicatorDependencies = LeaseBackend & {
  readonly logger: Logger;
  readonly metrics: ReplicationMetrics;
  /** @default config.worker.id, else `<hostname>-<pid>-<random>` */
  readonly workerId?: string;
  /** WorkerOptions.slot: stable across runs (the CLI's slot in its state directory). @default workerId */
  readonly slot?: string;
  /** WorkerOptions.formerSelf: dead earlier runs of this worker, whose leases it takes at once. @default none */
  readonly formerSelf?: (owner: string) => boolean;
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
  /** The slot the workers' heartbeats name (ReplicatorDependencies.slot). */
  readonly slot: string;
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
    writeMaxBytes: writeMaxBytes(config),
    provenance: provenanceSettings(config),
    copy: config.target.copy,
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
    ...(config.target.compression === "none" ? {} : { compressionType: config.target.compression }),
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
  logCrc32cImplementation(logger);
  warnOnSharedAlias(config, logger);
  const clock = deps.clock ?? systemClock;
  // One clock for the worker and every adapter, so deadlines and lease expiries agree.
  const sourceSide = clusterSide(config, "source", { logger, security: deps.security?.source, clock });
  const targetSide = clusterSide(config, "target", { logger, security: deps.security?.target, clock });
  // The pump writes every batch it reads as it came, or checks it (codec/pass-through.ts).
  const source = sourceSide.reader({ batchCrc: "write" });
  const target = targetSide.writer();
  const targetReader = config.provenance.enabled ? targetSide.reader() : undefined;
  const sourceAdmin = sourceSide.admin();
  const targetAdmin = targetSide.admin();
  const leases = createLeaseStore(config, deps, { logger, metrics: deps.metrics, clock });
  const slot = deps.slot ?? workerId;
  const makeWorker = (identity: { readonly workerId: string; readonly slot?: string }) =>
    new Worker({
      slot,
      ...identity,
      ...(deps.formerSelf === undefined ? {} : { formerSelf: deps.formerSelf }),
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
  return { workerId, slot, worker, workerFor: makeWorker, close: () => closeAll(closeables, logger) };
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

async function closeAll(closeables: readonly { close(): Promise<void> }[], logger: Logger): Promise<void> {
  const results = await Promise.allSettled(closeables.map((c) => c.close()));
  const failed = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed.length > 0) {
    logger.warn("closing Kafka connections failed", {
      errors: failed.map((f) => String((f.reason as Error)?.message ?? f.reason)),
    });
  }
}
