/**
 * The KafkaReplicator's defaults, apart from its resource code (as AWS Solutions Constructs keep
 * theirs): what a prop left out becomes. Each matches the functions' own config default
 * (lib/config/schema.ts), so leaving a prop out of the construct means the same as leaving the
 * field out of a config file.
 */
import { RemovalPolicy } from "aws-cdk-lib";
import { OVERLAPPING_TICK_MINUTES } from "../functions/timing.js";
import type { RenameMode } from "../lib/topics/rename.js";

/**
 * Ticks the schedule offers, in minutes: those whose run, tick plus overlap with the next run
 * (functions/timing.ts), fits in Lambda's 15 minutes.
 */
export const SCHEDULE_MINUTES: readonly number[] = OVERLAPPING_TICK_MINUTES;

/**
 * The most worker slots a stack may have: one rule each (EventBridge allows 300 rules per bus by
 * default, 5 targets per rule) plus its invoke permission, 200 of CloudFormation's 500 resources.
 */
export const MAX_FLEET_WORKERS = 100;

/** How a new holder of a target partition keeps the previous one from writing (target.fencing). */
export const TARGET_FENCING_MODES = ["transactional", "none"] as const;
export type TargetFencing = (typeof TARGET_FENCING_MODES)[number];

/** How records reach the target (target.copy): decoded and stamped, or source batches passed through. */
export const TARGET_COPY_MODES = ["records", "batches"] as const;
export type TargetCopy = (typeof TARGET_COPY_MODES)[number];

export const REPLICATOR_DEFAULTS = {
  /** Connect without TLS (the config's `tls: false`). */
  tls: false,
  /** A new holder fences the old one at the target: the strong guarantee unless asked otherwise. */
  fencing: "transactional" as TargetFencing,
  /** Records decoded and written with provenance: works with every target setting. */
  copy: "records" as TargetCopy,
  /** No topic excluded. */
  blacklist: "",
  /** No consumer group's offsets synced (the config's groups.whitelist unset). */
  groupWhitelist: "",
  groupBlacklist: "",
  /** Target topics keep their source names. */
  renamePolicy: "identity" as RenameMode,
  /** Worker schedules the construct creates when `workers` is a token (one per possible worker). */
  maxWorkers: MAX_FLEET_WORKERS,
  /** Checkpoints survive stack deletion: losing them would restart every partition from scratch. */
  tableRemovalPolicy: RemovalPolicy.RETAIN,
} as const;
