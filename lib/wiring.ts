/**
 * THE composition module: the one place that builds adapters from a config. `clusterSide` gives a
 * cluster side's Kafka adapters (partition reader and writer, cluster admin, group admin) with
 * that side's connection and security options; `leaseStoreFor` and `createLeaseStore` give the
 * lease store over the table a kind names. The worker (lib/replicator.ts), the functions, the
 * CLI, the lag function and the demo build their adapters here and nowhere else.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { CompressionCodec } from "./config/compression.js";
import {
  type ClusterConfig,
  leaseRequestTimeoutMs,
  type MirrorConfig,
  writeSafetyMarginMs,
} from "./config/schema.js";
import { systemClock } from "./core/clock.js";
import { MemoryLeaseTable } from "./core/lease/memory-table.js";
import { TableLeaseStore } from "./core/lease/store.js";
import type { Clock, GroupAdmin, LeaseStore, Logger, ReplicationMetrics } from "./core/ports.js";
import { transactionTimeoutBounds } from "./core/run/transaction-timeout.js";
import { createDynamoDbClient } from "./dynamodb/client.js";
import { watchClockSkew } from "./dynamodb/clock-skew.js";
import { createEmbeddedLeaseClient } from "./dynamodb/embedded/client.js";
import { hasEmbeddedStore } from "./dynamodb/embedded/state-dir.js";
import { createLeaseTable, describeLeaseTable } from "./dynamodb/lease-table.js";
import { DynamoDbLeaseTable } from "./dynamodb/lease-table-port.js";
import { isReplicatorError } from "./errors.js";
import { KafkaClusterAdmin } from "./kafka/admin/cluster-admin.js";
import { createGroupAdmin } from "./kafka/admin/group-admin.js";
import { CRC32C_VARIABLE, crc32cChoice } from "./kafka/codec/crc32c.js";
import { KafkaPartitionWriter, type KafkaPartitionWriterOptions } from "./kafka/produce/target-writer.js";
import { KafkaPartitionReader, type KafkaPartitionReaderOptions } from "./kafka/read/source-reader.js";
import { ANSWER_POOL_VARIABLE } from "./kafka/wire/answer-pool.js";
import type { KafkaConnectionOptions } from "./kafka/wire/connection.js";
import type { KafkaSecurityOptions } from "./kafka/wire/security.js";
import { createGroupSelector } from "./offsets/group-selection.js";
import type { GroupSyncStep } from "./offsets/sync-step.js";
import type { ClusterSide as Side } from "./secrets/cluster-security.js";

/**
 * `KAFKA_MIRROR_*` variables an adapter reads itself, which are not config fields: the config
 * loaders (the functions' and the CLI's) accept them beside the fields' own. KAFKA_MIRROR_CRC32C=js
 * makes the record codec sum CRC-32C in JavaScript instead of the native package;
 * KAFKA_MIRROR_ANSWER_POOL turns the reuse of answer buffers off, or poisons them (the tests).
 */
export const ADAPTER_VARIABLES: readonly string[] = [CRC32C_VARIABLE, ANSWER_POOL_VARIABLE];

/** The debug line of a worker's start that says which CRC-32C implementation the codec uses, and why. */
export function logCrc32cImplementation(logger: Logger): void {
  logger.debug("crc32c implementation", crc32cChoice());
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

export interface ClusterSideOptions {
  /** Told about the Kafka client's own problems. @default silent */
  readonly logger?: Logger | undefined;
  /** TLS and SASL options of this side (clusterSecurityOfBothSides). @default plaintext, no SASL */
  readonly security?: KafkaSecurityOptions | undefined;
  /** The clock deadlines and lease expiries are taken on. @default the adapter's (system clock) */
  readonly clock?: Clock | undefined;
}

/**
 * One cluster's adapters, each new on every call (the caller closes what it built). Named for
 * what they do to a partition, not for a side: the target is read too (its tail, group offset
 * translation) and, in the soak and the tests, the source written.
 */
export interface ClusterSideAdapters {
  readonly side: Side;
  readonly connection: KafkaConnectionOptions;
  /** `settings`: the worker's source reader leaves the CRC of batches passing as they came to the target. */
  reader(settings?: SourceReaderSettings): KafkaPartitionReader;
  /**
   * On the target: its compression, batch limits and fencing. On the source: plain writes, or
   * as `settings` say (sample traffic, the soak's producer).
   */
  writer(settings?: SourceWriterSettings): KafkaPartitionWriter;
  admin(): KafkaClusterAdmin;
  groups(): GroupAdmin;
}

export type SourceReaderSettings = Pick<KafkaPartitionReaderOptions, "batchCrc">;

export type SourceWriterSettings = Pick<KafkaPartitionWriterOptions, "compression" | "maxBatchRecords">;

export function clusterSide(
  config: MirrorConfig,
  side: Side,
  options: ClusterSideOptions = {},
): ClusterSideAdapters {
  const connection = kafkaConnectionOptions(config[side], options.logger, options.security);
  const clocked = options.clock === undefined ? connection : { ...connection, clock: options.clock };
  return {
    side,
    connection,
    reader: (settings = {}) =>
      new KafkaPartitionReader({ ...clocked, batchCodec: batchCodec(config), ...settings }),
    writer: (settings = {}) =>
      side === "target"
        ? targetWriter(config, clocked)
        : new KafkaPartitionWriter({ ...clocked, ...settings }),
    admin: () => new KafkaClusterAdmin(clocked),
    groups: () => createGroupAdmin(connection),
  };
}

/**
 * The codec target.copy "batches" sends every batch in (target.compression), or undefined: each
 * keeps its own ("none"). Both sides' readers take it, so the target's copies are read as the
 * source's batches are: their contentCrc over the records uncompressed.
 */
function batchCodec(config: MirrorConfig): CompressionCodec | undefined {
  const { copy, compression } = config.target;
  return copy === "batches" && compression !== "none" ? compression : undefined;
}

/**
 * THE consumer-group sync's clients, for the lag function and `kafka-mirror run` alike: both
 * sides' group admins, a reader and an admin of the target (the translation reads its tail), and
 * with target.copy "batches" a reader of the source (the translation matches our copies to its
 * batches). Null when no group is selected (groups.whitelist unset), or when records carry no
 * provenance (target.copy "records" with provenance off: nothing to translate by; warned). The
 * caller closes the step's clients (closeGroupSyncStep).
 */
export function groupSyncStep(
  config: MirrorConfig,
  options: {
    readonly logger: Logger;
    readonly security: { readonly source?: KafkaSecurityOptions; readonly target?: KafkaSecurityOptions };
  },
): GroupSyncStep | null {
  const { logger, security } = options;
  if (config.groups.whitelist === undefined) return null;
  const batches = config.target.copy === "batches";
  if (!batches && !config.provenance.enabled) {
    logger.warn(
      "groups.whitelist is set but provenance.enabled is false: group offsets cannot be translated",
    );
    return null;
  }
  const source = clusterSide(config, "source", { logger, security: security.source });
  const target = clusterSide(config, "target", { logger, security: security.target });
  return {
    sourceGroups: source.groups(),
    targetGroups: target.groups(),
    targetReader: target.reader(),
    targetAdmin: target.admin(),
    selector: createGroupSelector(config.groups),
    sourceAlias: config.source.alias,
    ...(batches
      ? { copy: "batches" as const, sourceReader: source.reader() }
      : { header: Buffer.from(config.provenance.header) }),
  };
}

/** Closes what groupSyncStep opened. */
export async function closeGroupSyncStep(step: GroupSyncStep | null): Promise<void> {
  if (step === null) return;
  const clients = [step.sourceGroups, step.targetGroups, step.targetReader, step.targetAdmin];
  if (step.copy === "batches") clients.push(step.sourceReader);
  await Promise.allSettled(clients.map((c) => c.close()));
}

function targetWriter(
  config: MirrorConfig,
  options: KafkaConnectionOptions & { readonly clock?: Clock },
): KafkaPartitionWriter {
  return new KafkaPartitionWriter({
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

export interface LeaseObservers {
  readonly logger?: Logger | undefined;
  readonly metrics?: Pick<ReplicationMetrics, "leaseItemSkipped"> | undefined;
  readonly clock?: Clock | undefined;
}

/**
 * THE lease store of a config over `backend`; `observers` hear of lease items it skips, and with
 * a logger, of this worker's clock being off DynamoDB's (clock-skew.ts).
 */
export function createLeaseStore(
  config: Pick<MirrorConfig, "leases">,
  backend: LeaseBackend,
  observers: LeaseObservers = {},
): LeaseStore {
  if (backend.dynamodb !== undefined && observers.logger !== undefined) {
    watchClockSkew(backend.dynamodb, observers.clock ?? systemClock, observers.logger);
  }
  const table =
    backend.memory !== undefined
      ? backend.memory
      : new DynamoDbLeaseTable({ client: backend.dynamodb, tableName: config.leases.table });
  return new TableLeaseStore({ table, ...observers });
}

/**
 * The DynamoDB client of the lease table, with the config's request timeout; region, credentials
 * and AWS_ENDPOINT_URL_DYNAMODB come from the environment, as the SDK reads them.
 */
export function leaseDynamoDbClient(config: Pick<MirrorConfig, "leases">): DynamoDBClient {
  return createDynamoDbClient({ requestTimeoutMs: leaseRequestTimeoutMs(config.leases) });
}

/**
 * The lease stores a process can open by name: `embedded` (a DynamoDB-compatible server on the
 * state directory, started on first use), `dynamodb` (the table `leases.table`, found the SDK's
 * usual way) or `memory` (this process's memory, shared with no other).
 */
export const LEASE_STORES = ["embedded", "dynamodb", "memory"] as const;
export type LeaseStoreKind = (typeof LEASE_STORES)[number];

export interface OpenedLeaseStore {
  /** What a worker's lease store is built over (createReplicator). */
  readonly backend: LeaseBackend;
  readonly store: LeaseStore;
  /** Where the leases live, for messages. */
  readonly location: string;
  close(): void;
}

/**
 * The lease store of `kind`, opened and checked: the embedded table is created when missing; a
 * real DynamoDB table is only described (the CDK stack owns it, nothing here creates it).
 */
export async function leaseStoreFor(
  config: MirrorConfig,
  kind: LeaseStoreKind,
  options: { readonly stateDir: string; readonly logger?: Logger | undefined },
): Promise<OpenedLeaseStore> {
  const { logger } = options;
  if (kind === "memory") {
    const backend = memoryLeaseBackend();
    return {
      backend,
      store: createLeaseStore(config, backend, { logger }),
      location: leaseStoreLocation(config, kind, options.stateDir),
      close: () => {},
    };
  }
  const table = config.leases.table;
  const client =
    kind === "embedded"
      ? await createEmbeddedLeaseClient({
          stateDir: options.stateDir,
          requestTimeoutMs: leaseRequestTimeoutMs(config.leases),
        })
      : leaseDynamoDbClient(config);
  try {
    if (kind === "embedded") await createLeaseTable(client, table);
    else await describeLeaseTable(client, table);
  } catch (error) {
    client.destroy();
    throw error;
  }
  return openedOver(config, kind, client, options);
}

function openedOver(
  config: MirrorConfig,
  kind: "embedded" | "dynamodb",
  client: DynamoDBClient,
  options: { readonly stateDir: string; readonly logger?: Logger | undefined },
): OpenedLeaseStore {
  const backend = { dynamodb: client };
  return {
    backend,
    store: createLeaseStore(config, backend, { logger: options.logger }),
    location: leaseStoreLocation(config, kind, options.stateDir),
    close: () => client.destroy(),
  };
}

/** Where a lease store of `kind` keeps its leases, as messages name it. */
export function leaseStoreLocation(
  config: Pick<MirrorConfig, "leases">,
  kind: LeaseStoreKind,
  stateDir: string,
): string {
  const table = config.leases.table;
  if (kind === "memory") return "this process's memory (gone when it ends)";
  return kind === "embedded" ? `embedded store ${stateDir}, table ${table}` : `DynamoDB table ${table}`;
}

/**
 * The lease store of `kind` as it is, for commands that only read: null when there is none
 * (no state directory or data in it, no table). Nothing is created: not the directory, not a
 * background server for an empty one, not the table. A table that exists is checked as usual.
 */
export async function existingLeaseStore(
  config: MirrorConfig,
  kind: "embedded" | "dynamodb",
  options: { readonly stateDir: string; readonly logger?: Logger | undefined },
): Promise<OpenedLeaseStore | null> {
  if (kind === "embedded" && !(await hasEmbeddedStore(options.stateDir))) return null;
  const requestTimeoutMs = leaseRequestTimeoutMs(config.leases);
  const client =
    kind === "embedded"
      ? await createEmbeddedLeaseClient({ stateDir: options.stateDir, requestTimeoutMs })
      : leaseDynamoDbClient(config);
  try {
    await describeLeaseTable(client, config.leases.table);
  } catch (error) {
    client.destroy();
    if (
      isReplicatorError(error, "LEASE_STORE_INVALID") &&
      error.details.awsError === "ResourceNotFoundException"
    )
      return null;
    throw error;
  }
  return openedOver(config, kind, client, options);
}
