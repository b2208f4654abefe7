/**
 * The KafkaReplicator's defaults, apart from its resource code (as AWS Solutions Constructs keep
 * theirs): what a prop left out becomes. Each matches the functions' own config default
 * (lib/config/schema.ts), so leaving a prop out of the construct means the same as leaving the
 * field out of a config file.
 */
import { RemovalPolicy } from "aws-cdk-lib";
import type { RenameMode } from "../lib/topics/rename.js";

/** Ticks the schedule offers, in minutes (a Lambda runs 15 minutes at most). */
export const SCHEDULE_MINUTES = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] as const;

/** How a new holder of a target partition keeps the previous one from writing (target.fencing). */
export const TARGET_FENCING_MODES = ["transactional", "none"] as const;
export type TargetFencing = (typeof TARGET_FENCING_MODES)[number];

export const REPLICATOR_DEFAULTS = {
  /** Connect without TLS (the config's `tls: false`). */
  tls: false,
  /** A new holder fences the old one at the target: the strong guarantee unless asked otherwise. */
  fencing: "transactional" as TargetFencing,
  /** No topic excluded. */
  blacklist: "",
  /** No consumer group's offsets synced (the config's groups.whitelist unset). */
  groupWhitelist: "",
  groupBlacklist: "",
  /** Target topics keep their source names. */
  renamePolicy: "identity" as RenameMode,
  /** Worker schedules the construct creates when `workers` is a token (one per possible worker). */
  maxWorkers: 10,
  /** Checkpoints survive stack deletion: losing them would restart every partition from scratch. */
  tableRemovalPolicy: RemovalPolicy.RETAIN,
} as const;
