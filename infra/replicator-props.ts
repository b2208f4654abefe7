/**
 * The KafkaReplicator's props: typed and documented (AWS Solutions Constructs style), checked up
 * front by replicator-props-schema.ts. A setting is either a value known at synth time, checked
 * there, or a deploy-time choice (a CloudFormation parameter) that `deployTimeChoice` admits only
 * when the parameter itself is restricted to the same values, so CloudFormation checks it at
 * deploy time.
 */
import type { CfnParameter, RemovalPolicy } from "aws-cdk-lib";
import type { SASL_MECHANISMS } from "../lib/config/schema.js";
import { ReplicatorError } from "../lib/errors.js";
import type { RenameMode } from "../lib/topics/rename.js";
import type { TargetCopy, TargetFencing } from "./replicator-defaults.js";

export type SaslMechanism = (typeof SASL_MECHANISMS)[number];

declare const deployTime: unique symbol;
/** A CloudFormation token standing for a `T` chosen at deploy time; made by `deployTimeChoice`. */
export type DeployTimeChoice<T> = string & { readonly [deployTime]: T };
/** A value known at synth time, or one chosen at deploy time among the same values. */
export type Setting<T> = T | DeployTimeChoice<T>;

/** The longest source alias (the config's limit too): alarm names and descriptions budget for it. */
export const ALIAS_MAX_LENGTH = 100;

/** Patterns of the values the stack's parameters and the construct's concrete props accept. */
export const PATTERNS = {
  brokers: "^[A-Za-z0-9._-]+:[0-9]{1,5}(,[A-Za-z0-9._-]+:[0-9]{1,5})*$",
  alias: `^[a-zA-Z0-9._-]{1,${ALIAS_MAX_LENGTH}}$`,
  secretArn: "^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:[A-Za-z0-9/_+=.@-]+$",
  mskClusterArn: "^arn:aws[a-z-]*:kafka:[a-z0-9-]+:[0-9]{12}:cluster/[A-Za-z0-9-]+/[A-Za-z0-9-]+$",
} as const;

export interface ClusterProps {
  /** Bootstrap `host:port` list, comma-separated; a token is allowed. */
  readonly bootstrapServers: string;
  /** Connect over TLS. @default false */
  readonly tls?: Setting<boolean>;
  /** SASL mechanism. @default no SASL (the config's `none`) */
  readonly saslMechanism?: Setting<SaslMechanism>;
  /**
   * Secrets Manager secret holding this cluster's credentials; a token that may resolve to ""
   * (none) is allowed. @default none
   */
  readonly secretArn?: string;
  /**
   * MSK cluster ARN, for `aws-msk-iam`: the functions get exactly the kafka-cluster actions their
   * side needs on it and its topics; a token that may resolve to "" (none) is allowed. @default none
   */
  readonly mskClusterArn?: string;
}

export interface VpcPlacementProps {
  /** Private subnets with a route to the clusters and to DynamoDB, Secrets Manager and CloudWatch. */
  readonly subnetIds: readonly string[];
  readonly securityGroupIds: readonly string[];
}

export interface KafkaReplicatorProps {
  readonly source: ClusterProps & {
    /** Names the source cluster (provenance of every copy, prefix of renamed topics); a token is allowed. */
    readonly alias: string;
  };
  readonly target: ClusterProps & {
    /** How a new partition holder fences the old one (the config's target.fencing). @default "transactional" */
    readonly fencing?: Setting<TargetFencing>;
    /** How records reach the target (the config's target.copy; "batches" needs fencing "transactional"). @default "records" */
    readonly copy?: Setting<TargetCopy>;
  };
  /**
   * Whole-name regex of the topics to mirror; a token is allowed. A concrete one is compiled at
   * synth by the functions' own checker (lib/topics/pattern.ts), so a typo fails `cdk synth`.
   */
  readonly whitelist: string;
  /** Whole-name regex of topics never mirrored; "" for none. @default "" */
  readonly blacklist?: string;
  /** How target topics are named. @default "identity" */
  readonly renamePolicy?: Setting<RenameMode>;
  /** Whole-name regex of consumer groups whose offsets the lag function syncs to the target; "" for none. @default "" */
  readonly groupWhitelist?: string;
  /** Whole-name regex of consumer groups never synced; wins over groupWhitelist. @default "" */
  readonly groupBlacklist?: string;
  /**
   * Concurrent replicate invocations per tick, 1..maxWorkers; a token (CloudFormation parameter)
   * is allowed and then checked at deploy time by a template rule.
   */
  readonly workers: number;
  /**
   * How many worker schedules exist when `workers` is a token; each above it is switched off.
   * At most 100. @default 100
   */
  readonly maxWorkers?: number;
  /** Tick of the replicate schedule in minutes, 1..13; a token is allowed (checked by a template rule). */
  readonly scheduleMinutes: number;
  /** Optional VPC placement for private clusters. @default outside any VPC */
  readonly vpc?: VpcPlacementProps;
  /** @default RemovalPolicy.RETAIN (checkpoints survive stack deletion) */
  readonly tableRemovalPolicy?: RemovalPolicy;
}

/** The props with every default filled in, as the resource code reads them. */
export interface ResolvedReplicatorProps extends KafkaReplicatorProps {
  readonly source: KafkaReplicatorProps["source"] & { readonly tls: Setting<boolean> };
  readonly target: KafkaReplicatorProps["target"] & {
    readonly tls: Setting<boolean>;
    readonly fencing: Setting<TargetFencing>;
    readonly copy: Setting<TargetCopy>;
  };
  readonly blacklist: string;
  readonly groupWhitelist: string;
  readonly groupBlacklist: string;
  readonly renamePolicy: Setting<RenameMode>;
  readonly maxWorkers: number;
  readonly tableRemovalPolicy: RemovalPolicy;
}

/**
 * A parameter's value as a deploy-time choice among `choices`; throws unless the parameter's
 * AllowedValues are exactly those choices, so CloudFormation refuses anything else.
 */
export function deployTimeChoice<T extends string | boolean>(
  parameter: CfnParameter,
  choices: readonly T[],
): DeployTimeChoice<T> {
  const expected = choices.map(String).sort();
  const allowed = [...(parameter.allowedValues ?? [])].sort();
  if (JSON.stringify(expected) !== JSON.stringify(allowed)) {
    throw new ReplicatorError(
      "CONFIG_INVALID",
      `parameter ${parameter.node.id} allows ${JSON.stringify(allowed)}, a choice among ${JSON.stringify(expected)} needs exactly those`,
    );
  }
  return parameter.valueAsString as DeployTimeChoice<T>;
}

/** The value the functions' environment carries for a setting. */
export function settingText(value: Setting<string | boolean>): string {
  return typeof value === "boolean" ? String(value) : value;
}
