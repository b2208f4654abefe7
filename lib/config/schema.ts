/**
 * The replicator's configuration: one strict schema, every field defaulted where a safe
 * default exists. `parseConfig` refuses unknown keys (a misspelt key would otherwise be a
 * silently ignored setting) and lists every bad field in one error.
 */
import type { z } from "zod";
import { DEFAULT_PROVENANCE_HEADER } from "../core/provenance.js";
import { writeFitsInLease } from "../core/run/worker-settings.js";
import { ReplicatorError } from "../errors.js";
import { RESERVED_TOPIC_PREFIX } from "../topics/names.js";
import { COMPRESSION_CODECS } from "./compression.js";
import { checkBatchesMode } from "./copy-mode.js";
import { brokerList, filePath, flag, integer, oneOf, section, token } from "./fields.js";
import { formatIssues } from "./issues.js";
import { LEASE_STORE_MAX_ATTEMPTS, largestWriteGroups, writeSafetyMarginMs } from "./timings.js";
import { groupsSchema, topicsSchema } from "./topics-schema.js";

export {
  DEFAULT_LEASE_REQUEST_TIMEOUT_MS,
  LEASE_STORE_MAX_ATTEMPTS,
  largestWriteGroups,
  leaseRequestTimeoutMs,
  writeMaxBytes,
  writeSafetyMarginMs,
} from "./timings.js";

const KIB = 1024;
const MIB = 1024 * KIB;

// An alias becomes a topic-name prefix (`<alias>.<topic>`), so it uses topic-name characters.
const alias = token(/^[a-zA-Z0-9._-]+$/, 1, 100, "a cluster alias of [a-zA-Z0-9._-]").refine(
  (value) => !`${value}.`.startsWith(RESERVED_TOPIC_PREFIX),
  { error: `must not put topics under kafka-mirror's reserved prefix "${RESERVED_TOPIC_PREFIX}"` },
);

// Kafka uses the client id in quotas and metric names; keep to characters every tool accepts.
const clientId = token(/^[a-zA-Z0-9._-]+$/, 1, 255, "a client id of [a-zA-Z0-9._-]");

/** SASL mechanisms a cluster connection may use; `none` connects without SASL. */
export const SASL_MECHANISMS = ["none", "plain", "scram-sha-256", "scram-sha-512", "aws-msk-iam"] as const;

const SECRET_ARN = /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+$/;

const connection = {
  brokers: brokerList().describe("Addresses to bootstrap from: a list, or one comma-separated string."),
  clientId: clientId.default("kafka-mirror").describe("Kafka client id, visible in broker logs and quotas."),
  tls: flag().default(false).describe("Connect over TLS (MSK's TLS listeners); plaintext when false."),
  saslMechanism: oneOf(SASL_MECHANISMS)
    .optional()
    .describe(
      "SASL mechanism (absent: none); `aws-msk-iam` signs with the function's IAM role and needs `tls`.",
    ),
  secretArn: token(SECRET_ARN, 20, 2048, "a Secrets Manager secret ARN")
    .optional()
    .describe(
      "Secrets Manager secret (JSON) with this cluster's credentials: `username` and `password` for PLAIN and SCRAM; optional `ca`, `cert`, `key` (PEM) for a private CA and mutual TLS. Secrets never sit in plain config. The functions take PLAIN/SCRAM credentials from here only.",
    ),
  tlsCaFile: filePath()
    .optional()
    .describe(
      "PEM file of the CA(s) to trust instead of the system store (private CA); needs `tls`. Read at connect time.",
    ),
  tlsCertFile: filePath()
    .optional()
    .describe("PEM file of the client certificate for mutual TLS; needs `tls` and `tlsKeyFile`."),
  tlsKeyFile: filePath()
    .optional()
    .describe("PEM file of the client certificate's private key; needs `tls` and `tlsCertFile`."),
  credentialsFile: filePath()
    .optional()
    .describe(
      'JSON file `{"username": "...", "password": "..."}` for PLAIN and SCRAM (CLI): used when the `KAFKA_MIRROR_<SIDE>_USERNAME`/`PASSWORD` variables are unset, before `secretArn`.',
    ),
  connectionTimeoutMs: integer(100, 120_000)
    .default(10_000)
    .describe("How long to wait for a TCP (and TLS) connection to a broker."),
  requestTimeoutMs: integer(1_000, 300_000)
    .default(30_000)
    .describe("How long to wait for a broker's answer to one request."),
};

type ConnectionSettings = z.infer<z.ZodObject<typeof connection>>;

/** TLS files need TLS (and a certificate its key); MSK IAM needs TLS. Issues at the side's own paths. */
function checkSecurity(side: ConnectionSettings, ctx: z.RefinementCtx): void {
  const { saslMechanism = "none", tls } = side;
  const issue = (path: string, input: unknown, message: string) =>
    ctx.addIssue({ code: "custom", path: [path], input, message });
  for (const field of ["tlsCaFile", "tlsCertFile", "tlsKeyFile"] as const) {
    if (side[field] !== undefined && !tls)
      issue(field, side[field], "needs tls: true (a PEM file for a TLS connection)");
  }
  if ((side.tlsCertFile === undefined) !== (side.tlsKeyFile === undefined)) {
    const missing = side.tlsCertFile === undefined ? "tlsCertFile" : "tlsKeyFile";
    issue(missing, undefined, "required: mutual TLS needs both tlsCertFile and tlsKeyFile");
  }
  if (saslMechanism === "aws-msk-iam" && !tls) {
    issue(
      "tls",
      tls,
      "must be true with saslMechanism aws-msk-iam: MSK serves IAM authentication over TLS only",
    );
  }
}

/**
 * source.alias when absent. Kept for one local source (CLI, demo); the stack's SourceAlias has no
 * default. Exactly-once counts target records carrying this alias as its own, so two replicators
 * on the default writing to one target would skip each other's offsets: the worker warns.
 */
export const DEFAULT_SOURCE_ALIAS = "source";

const sourceSchema = section({
  ...connection,
  alias: alias
    .default(DEFAULT_SOURCE_ALIAS)
    .describe(
      "Names the source cluster, unique among all sources written into the same target: the provenance header every copy carries and the `prefix` rename's prefix.",
    ),
}).superRefine(checkSecurity);

const targetSchema = section({
  ...connection,
  requestTimeoutMs: integer(1_000, 300_000)
    .default(15_000)
    .describe(
      "How long to wait for the target's answer to one produce. Shorter than the source's default: a write must finish well inside a lease (leases.durationMs > leases.renewIntervalMs + 2 x this).",
    ),
  alias: alias
    .optional()
    .describe(
      "Names the target cluster when it is mirrored back (active-active); its copies are not returned.",
    ),
  compression: oneOf(COMPRESSION_CODECS)
    .default("none")
    .describe(
      'Codec of the batches written to the target. With target.copy "batches", "none" keeps each source batch\'s own codec; any other recompresses every batch in another codec to it (records unchanged). Other than "none", topic sync gives target topics it as compression.type where the source sets one.',
    ),
  copy: oneOf(["records", "batches"])
    .default("records")
    .describe(
      'How records reach the target. "records": each is decoded and written again with the provenance header (target.compression applies; loops prevented by alias). "batches": each source batch is written as it came, byte for byte but for its producer id, epoch, sequence, transactional bit and CRC: no header, no decoding or encoding of records; exactly-once by fenced writes alone. With target.compression other than "none" each batch in another codec has its records recompressed, nothing else changed. It needs target.fencing "transactional" and no target.alias (no header to stop a loop); another producer\'s batches in a target partition are skipped and counted (OtherWriterBatches). Change it on a stopped or drained mirror.',
    ),
  fencing: oneOf(["transactional", "none"])
    .default("transactional")
    .describe(
      "How a partition's former holder is kept from landing writes after another worker took it over. \"transactional\": every write is a transaction of the partition's own transactional producer, and a new holder's InitProducerId fences the old one at the broker, however long it was frozen (needs a target that supports transactions, Kafka 0.11+, and read_committed consumers to see only committed data). \"none\": the lease alone, by the workers' clocks: a worker frozen between its lease check and its produce request can land a duplicate.",
    ),
  replicationFactor: integer(-1, 32_767)
    .refine((value) => value !== 0, {
      error: "expected -1 (broker default) or an integer from 1 to 32767, got 0",
    })
    .default(-1)
    .describe("Replication factor of topics the replicator creates; -1 leaves it to the broker default."),
  maxBatchBytes: integer(KIB, 100 * MIB)
    .default(MIB)
    .describe(
      "Upper bound of one produced record batch; keep it at or below the target's max.message.bytes.",
    ),
  maxInFlightBatches: integer(1, 5)
    .default(5)
    .describe(
      "Batches of one partition sent before the first is acknowledged. Above 1 this relies on the target refusing a batch whose producer sequence skips one, as Kafka does for idempotent producers (and as max.in.flight.requests.per.connection <= 5 relies on in Kafka's clients).",
    ),
}).superRefine(checkSecurity);

const batchSchema = section({
  maxRecords: integer(1, 1_000_000)
    .default(10_000)
    .describe("Most records copied per fetch of one partition."),
  maxBytes: integer(KIB, 100 * MIB)
    .default(MIB)
    .describe(
      "Most bytes fetched per partition per request (Kafka may exceed it to return one whole batch).",
    ),
  maxWaitMs: integer(0, 30_000)
    .default(500)
    .describe("How long the source broker may hold a fetch open when the partition has no new data."),
  readAheadBytes: integer(0, 4 * 1024 * MIB)
    .default(64 * MIB)
    .describe(
      "Fetched bytes one worker may hold ahead of its writes, over all its partitions (each reads at most two fetches ahead). 0 reads the next fetch only once the last one is being written.",
    ),
});

const leasesSchema = section({
  table: token(/^[a-zA-Z0-9_.-]+$/, 3, 255, "a DynamoDB table name of [a-zA-Z0-9_.-]")
    .default("kafka-mirror-leases")
    .describe("DynamoDB table holding one lease and checkpoint per source partition."),
  durationMs: integer(1_000, 3_600_000)
    .default(60_000)
    .describe("How long a lease stays valid without renewal; a dead worker's partitions wait this long."),
  renewIntervalMs: integer(100, 1_800_000)
    .default(10_000)
    .describe("How often a worker renews the leases it holds."),
  rebalanceIntervalMs: integer(100, 3_600_000)
    .default(5_000)
    .describe("How often a worker looks for free or expired leases to take and balances load."),
  checkpointIntervalMs: integer(0, 600_000)
    .default(1_000)
    .describe(
      "At most one checkpoint per partition per interval (0: per batch); a stop checkpoints at once.",
    ),
  maxClaimsPerRound: integer(1, 100_000)
    .default(1_000)
    .describe(
      'Leases a worker tries to take per round, and assignments the leader changes per round (README "Lease protocol"): 5,000 partitions settle in five rounds at the default.',
    ),
  requestTimeoutMs: integer(50, 60_000)
    .optional()
    .describe(
      "Time one DynamoDB attempt may take before it fails (connection included); a call makes at most 2 attempts, so 2 x this must be below leases.renewIntervalMs. Absent: 2000, or a third of leases.renewIntervalMs when that is less.",
    ),
}).superRefine((leases, ctx) => {
  if (
    leases.requestTimeoutMs !== undefined &&
    LEASE_STORE_MAX_ATTEMPTS * leases.requestTimeoutMs >= leases.renewIntervalMs
  ) {
    ctx.addIssue({
      code: "custom",
      path: ["requestTimeoutMs"],
      input: leases.requestTimeoutMs,
      message:
        `must be less than leases.renewIntervalMs (${leases.renewIntervalMs}) / ${LEASE_STORE_MAX_ATTEMPTS} attempts, ` +
        `got ${leases.requestTimeoutMs}: a lease store call that hangs must fail before the next renewal is due`,
    });
  }
  if (leases.renewIntervalMs >= leases.durationMs / 2) {
    ctx.addIssue({
      code: "custom",
      path: ["renewIntervalMs"],
      input: leases.renewIntervalMs,
      message:
        `must be less than half of leases.durationMs (${leases.durationMs}), got ${leases.renewIntervalMs}: ` +
        "one missed or slow renewal must not lose the lease",
    });
  }
  if (leases.checkpointIntervalMs >= leases.durationMs) {
    ctx.addIssue({
      code: "custom",
      path: ["checkpointIntervalMs"],
      input: leases.checkpointIntervalMs,
      message:
        `must be less than leases.durationMs (${leases.durationMs}), got ${leases.checkpointIntervalMs}: ` +
        "progress must reach the lease store at least once per lease",
    });
  }
  if (leases.rebalanceIntervalMs > leases.durationMs) {
    ctx.addIssue({
      code: "custom",
      path: ["rebalanceIntervalMs"],
      input: leases.rebalanceIntervalMs,
      message:
        `must be at most leases.durationMs (${leases.durationMs}), got ${leases.rebalanceIntervalMs}: ` +
        "an expired lease would otherwise stay unowned longer than a lease lasts",
    });
  }
});

const workerSchema = section({
  id: token(/^[\x21-\x7e]+$/, 1, 256, "printable ASCII without spaces")
    .optional()
    .describe(
      "Owner id written into leases; absent: a unique one per run (in the CLI `<hostname>-w<n>~<random>`, slot n of the state directory, so a restart takes its own leases back).",
    ),
  startFrom: oneOf(["earliest", "latest"])
    .default("earliest")
    .describe("Where a partition without a checkpoint starts: its log start, or its end (new records only)."),
});

const provenanceSchema = section({
  enabled: flag()
    .default(true)
    .describe(
      "Exactly-once delivery: every copied record carries a provenance header (source alias, partition, offset) and a worker taking over a partition reads the target's tail to skip what already landed; records that came from target.alias are not copied back. Off: at-least-once (a crash may copy the batch in flight again) and no loop prevention.",
    ),
  header: token(/^[\x21-\x7e]+$/, 1, 255, "printable ASCII without spaces")
    .default(DEFAULT_PROVENANCE_HEADER)
    .describe("Name of the provenance header."),
});

export const mirrorConfigSchema = section({
  source: sourceSchema,
  target: targetSchema,
  // No section still reads as one without its required whitelist, so the message names that.
  topics: topicsSchema.prefault({} as z.input<typeof topicsSchema>),
  groups: groupsSchema.prefault({}),
  batch: batchSchema.prefault({}),
  leases: leasesSchema.prefault({}),
  worker: workerSchema.prefault({}),
  provenance: provenanceSchema.prefault({}),
}).superRefine((config, ctx) => {
  // Zod skips this after a type error anywhere (the values could not be compared), so a
  // cross-section problem may only show once the field errors are fixed.
  if (config.source.requestTimeoutMs <= config.batch.maxWaitMs) {
    ctx.addIssue({
      code: "custom",
      path: ["source", "requestTimeoutMs"],
      input: config.source.requestTimeoutMs,
      message:
        `must be greater than batch.maxWaitMs (${config.batch.maxWaitMs}), got ${config.source.requestTimeoutMs}: ` +
        "a fetch of a caught-up partition legitimately waits that long and must not time out",
    });
  }
  // A write starts only with a request and its resend of time left on the lease: that must fit
  // inside the lease, after a renewal interval of slack, or a worker could never start a write
  // (the worker stops writing that long before its lease expires).
  const writeWindowMs = writeSafetyMarginMs(config);
  if (!writeFitsInLease(config.leases, writeWindowMs)) {
    ctx.addIssue({
      code: "custom",
      path: ["leases", "durationMs"],
      input: config.leases.durationMs,
      message:
        `must be greater than leases.renewIntervalMs (${config.leases.renewIntervalMs}) + 2 x target.requestTimeoutMs ` +
        `(${writeWindowMs}), got ${config.leases.durationMs}: a write must fit inside a lease`,
    });
  }
  const groups = largestWriteGroups(config);
  if (groups * config.target.requestTimeoutMs > writeWindowMs) {
    ctx.addIssue({
      code: "custom",
      path: ["batch", "maxBytes"],
      input: config.batch.maxBytes,
      message:
        `with target.maxBatchBytes (${config.target.maxBatchBytes}) and target.maxInFlightBatches ` +
        `(${config.target.maxInFlightBatches}), a full fetch of batch.maxBytes (${config.batch.maxBytes}) is ` +
        `written in up to ${groups} rounds of target.requestTimeoutMs (${config.target.requestTimeoutMs}), ` +
        `more than the ${writeWindowMs} ms a write is sure of before its lease ends: lower batch.maxBytes ` +
        "or raise target.maxBatchBytes or target.maxInFlightBatches",
    });
  }
  checkBatchesMode(config, ctx);
  if (config.target.alias !== undefined && config.target.alias === config.source.alias) {
    ctx.addIssue({
      code: "custom",
      path: ["target", "alias"],
      input: config.target.alias,
      message: `must differ from source.alias, both are ${JSON.stringify(config.source.alias)}`,
    });
  }
});

/** Each section's own schema, for readers of its fields' descriptions (reference.ts). */
export const CONFIG_SECTIONS = {
  source: sourceSchema,
  target: targetSchema,
  topics: topicsSchema,
  groups: groupsSchema,
  batch: batchSchema,
  leases: leasesSchema,
  worker: workerSchema,
  provenance: provenanceSchema,
} as const satisfies Record<keyof typeof mirrorConfigSchema.shape, unknown>;

/** The field names of each section, for loaders that address fields one by one. */
export const CONFIG_FIELDS = Object.fromEntries(
  Object.entries(CONFIG_SECTIONS).map(([name, schema]) => [name, Object.keys(schema.shape)]),
) as unknown as { readonly [S in keyof typeof CONFIG_SECTIONS]: readonly string[] };

/** The parsed configuration, defaults applied. */
export type MirrorConfig = z.infer<typeof mirrorConfigSchema>;

/** One side's connection settings (source or target). */
export type ClusterConfig = MirrorConfig["source"] | MirrorConfig["target"];

/** What a config file or event may contain before defaults are applied. */
export type MirrorConfigInput = z.input<typeof mirrorConfigSchema>;

/** Throws ReplicatorError CONFIG_INVALID naming every bad field (details.issues: path and message). */
export function parseConfig(input: unknown): MirrorConfig {
  const result = mirrorConfigSchema.safeParse(input, { reportInput: true });
  if (result.success) return result.data;
  const issues = formatIssues(result.error.issues);
  throw new ReplicatorError(
    "CONFIG_INVALID",
    `invalid config: ${issues.map((issue) => `${issue.path}: ${issue.message}`).join("; ")}`,
    { details: { issues } },
  );
}
