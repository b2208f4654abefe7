/**
 * Which topic-level configs of a source topic its target copy gets, and what an incremental SET
 * must change on the target to match. Pure: the planner reads the configs and applies the
 * changes (topic-drift.ts, planner.ts).
 *
 * Rules:
 * - Only configs set on the source topic are copied (broker and static defaults are the target
 *   cluster's own business), and only names in the allow list that the deny list does not name.
 * - Nothing is ever deleted on the target: a setting only the target has, or one the source
 *   dropped, stays (MirrorMaker 2's legacy AlterConfigs replaced the whole set and wiped such
 *   settings; KIP-894 moved it to incremental alters for that reason).
 * - Settings that describe the target cluster's own hardware, durability or policy
 *   (NEVER_SYNCED_CONFIGS) are never copied, whatever the allow list says.
 * - `max.message.bytes` gets headroom for the provenance header each copy carries, and is only
 *   raised, never lowered: a target smaller than the source's would refuse records the source
 *   took.
 * - `compression.type` becomes target.compression where that is set: the source's value (say
 *   lz4) would make the target broker recompress every zstd batch we send, overriding the
 *   setting, and in target.copy "batches" rebuild the copies the look matches.
 */
import { ReplicatorError } from "../../errors.js";

/** Copied by default: how long and how data is kept, and how large a record may be. */
export const DEFAULT_SYNCED_CONFIGS = [
  "cleanup.policy",
  "retention.ms",
  "retention.bytes",
  "max.message.bytes",
  "min.compaction.lag.ms",
  "max.compaction.lag.ms",
  "delete.retention.ms",
  "min.cleanable.dirty.ratio",
  "segment.ms",
  "segment.bytes",
  "compression.type",
] as const;

/**
 * Never copied, with the reason `plan` and config errors give. A name ending in "." is a prefix.
 * - min.insync.replicas, unclean.leader.election.enable: durability of the target's replicas,
 *   sized to the target cluster (a value above its replication factor makes every write fail).
 * - *.replication.throttled.replicas: reassignment throttles naming the source's broker ids.
 * - message.timestamp.*: LogAppendTime on the target would overwrite the timestamps we copy
 *   (the source's are already in the records), and the difference/before/after limits would
 *   refuse old records that the source took when they were new.
 * - confluent.* (placement constraints, tiering, schema validation): vendor settings that name
 *   the source cluster's racks, brokers or services.
 * - message.downconversion.enable: removed in Kafka 4.0, where setting it fails the alter.
 */
export const NEVER_SYNCED_CONFIGS: readonly { readonly name: string; readonly why: string }[] = [
  { name: "min.insync.replicas", why: "a durability setting of the target's own replicas" },
  { name: "unclean.leader.election.enable", why: "a durability setting of the target's own replicas" },
  { name: "leader.replication.throttled.replicas", why: "names the source cluster's broker ids" },
  { name: "follower.replication.throttled.replicas", why: "names the source cluster's broker ids" },
  { name: "message.timestamp.", why: "would rewrite or refuse the copied records' timestamps" },
  { name: "confluent.", why: "vendor placement settings naming the source cluster's racks and brokers" },
  { name: "message.downconversion.enable", why: "removed in Kafka 4.0: setting it fails the alter" },
];

export const MAX_MESSAGE_BYTES = "max.message.bytes";

export const COMPRESSION_TYPE = "compression.type";

/**
 * Added to the source's max.message.bytes on the target: every copy carries a provenance header
 * (its key, up to 255 bytes, an alias of up to 100, partition and offset, and varint lengths),
 * so a batch at the source's limit is that much larger when we write it.
 */
export const MAX_MESSAGE_BYTES_HEADROOM = 1024;

export interface ConfigSyncPolicy {
  /** False: no config is copied, on creation or later. */
  readonly enabled: boolean;
  /** Names copied (exact names). */
  readonly allow: readonly string[];
  /** Names never copied even when allowed. */
  readonly deny: readonly string[];
  /**
   * target.compression when it is not "none": the value a synced compression.type gets instead
   * of the source's (Kafka's names for the codecs are ours). Undefined: the source's value.
   */
  readonly compressionType?: string;
}

export const DEFAULT_CONFIG_SYNC: ConfigSyncPolicy = {
  enabled: true,
  allow: DEFAULT_SYNCED_CONFIGS,
  deny: [],
};

/** One setting the target gets: `from` is the target's current value, null when it has none. */
export interface ConfigChange {
  readonly name: string;
  readonly from: string | null;
  readonly to: string;
}

/** Why `name` can never be synced, or null when it may be. */
export function neverSyncedReason(name: string): string | null {
  const rule = NEVER_SYNCED_CONFIGS.find((r) =>
    r.name.endsWith(".") ? name.startsWith(r.name) : name === r.name,
  );
  return rule?.why ?? null;
}

export function isSynced(name: string, policy: ConfigSyncPolicy): boolean {
  return (
    policy.enabled &&
    policy.allow.includes(name) &&
    !policy.deny.includes(name) &&
    neverSyncedReason(name) === null
  );
}

/** The value the target should have for a synced source setting. */
function targetValue(name: string, sourceValue: string, policy: ConfigSyncPolicy): string {
  if (name === COMPRESSION_TYPE) return policy.compressionType ?? sourceValue;
  if (name !== MAX_MESSAGE_BYTES) return sourceValue;
  const bytes = Number(sourceValue);
  return Number.isSafeInteger(bytes) ? String(bytes + MAX_MESSAGE_BYTES_HEADROOM) : sourceValue;
}

/** The configs a newly created target topic gets. */
export function configsForCreate(
  source: ReadonlyMap<string, string>,
  policy: ConfigSyncPolicy,
): Map<string, string> {
  return new Map(configChanges(source, new Map(), policy).map((c) => [c.name, c.to]));
}

/**
 * The SETs that bring `target` in line with `source` under `policy`, sorted by name. Settings the
 * source does not have are left alone; max.message.bytes is only raised.
 */
export function configChanges(
  source: ReadonlyMap<string, string>,
  target: ReadonlyMap<string, string>,
  policy: ConfigSyncPolicy,
): ConfigChange[] {
  const changes: ConfigChange[] = [];
  for (const [name, value] of source) {
    if (!isSynced(name, policy)) continue;
    const to = targetValue(name, value, policy);
    const from = target.get(name) ?? null;
    if (from === to) continue;
    if (name === MAX_MESSAGE_BYTES && from !== null && Number(from) >= Number(to)) continue;
    changes.push({ name, from, to });
  }
  return changes.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Throws CONFIG_INVALID when the allow list names a setting that must never be copied. */
export function assertConfigSyncPolicy(policy: ConfigSyncPolicy): void {
  const refused = policy.allow.flatMap((name) => {
    const why = neverSyncedReason(name);
    return why === null ? [] : [{ name, why }];
  });
  if (refused.length === 0) return;
  throw new ReplicatorError(
    "CONFIG_INVALID",
    `topics.configSyncAllow names settings that are never copied: ${refused.map((r) => `${r.name} (${r.why})`).join("; ")}`,
    { details: { refused } },
  );
}
