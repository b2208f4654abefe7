/**
 * The KafkaReplicator's props: typed, documented, and checked up front (AWS Solutions Constructs
 * style). A setting is either a value known at synth time, checked here, or a deploy-time choice
 * (a CloudFormation parameter) that `deployTimeChoice` admits only when the parameter itself is
 * restricted to the same values, so CloudFormation checks it at deploy time.
 */
import { type CfnParameter, type RemovalPolicy, Token } from "aws-cdk-lib";
import { SASL_MECHANISMS } from "../lib/config/schema.js";
import { ReplicatorError } from "../lib/errors.js";
import { RESERVED_TOPIC_PREFIX } from "../lib/topics/names.js";
import { RENAME_MODES, type RenameMode } from "../lib/topics/rename.js";
import {
  MAX_FLEET_WORKERS,
  REPLICATOR_DEFAULTS,
  SCHEDULE_MINUTES,
  TARGET_FENCING_MODES,
  type TargetFencing,
} from "./replicator-defaults.js";

export type SaslMechanism = (typeof SASL_MECHANISMS)[number];

declare const deployTime: unique symbol;
/** A CloudFormation token standing for a `T` chosen at deploy time; made by `deployTimeChoice`. */
export type DeployTimeChoice<T> = string & { readonly [deployTime]: T };
/** A value known at synth time, or one chosen at deploy time among the same values. */
export type Setting<T> = T | DeployTimeChoice<T>;

/** Patterns of the values the stack's parameters and the construct's concrete props accept. */
export const PATTERNS = {
  brokers: "^[A-Za-z0-9._-]+:[0-9]{1,5}(,[A-Za-z0-9._-]+:[0-9]{1,5})*$",
  alias: "^[a-zA-Z0-9._-]{1,100}$",
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
  };
  /** Whole-name regex of the topics to mirror; a token is allowed. */
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

/** Checks every concrete prop, collecting all problems into one error; fills in the defaults. */
export function resolveReplicatorProps(props: KafkaReplicatorProps): ResolvedReplicatorProps {
  const problems = [
    ...clusterProblems("source", props.source),
    ...clusterProblems("target", props.target),
    ...concrete(props.source.alias, (alias) =>
      new RegExp(PATTERNS.alias).test(alias) && !`${alias}.`.startsWith(RESERVED_TOPIC_PREFIX)
        ? []
        : [
            `source.alias: ${JSON.stringify(alias)} must be 1 to 100 characters of [a-zA-Z0-9._-], not under "${RESERVED_TOPIC_PREFIX}"`,
          ],
    ),
    ...concrete(props.whitelist, (w) => (w === "" ? ["whitelist: must not be empty"] : [])),
    ...choiceProblems("target.fencing", props.target.fencing, TARGET_FENCING_MODES),
    ...choiceProblems("renamePolicy", props.renamePolicy, RENAME_MODES),
    ...fleetProblems(props),
    ...vpcProblems(props.vpc),
  ];
  if (problems.length > 0) {
    throw new ReplicatorError("CONFIG_INVALID", `invalid KafkaReplicator props: ${problems.join("; ")}`, {
      details: { problems },
    });
  }
  const d = REPLICATOR_DEFAULTS;
  return {
    ...props,
    source: { ...props.source, tls: props.source.tls ?? d.tls },
    target: { ...props.target, tls: props.target.tls ?? d.tls, fencing: props.target.fencing ?? d.fencing },
    blacklist: props.blacklist ?? d.blacklist,
    groupWhitelist: props.groupWhitelist ?? d.groupWhitelist,
    groupBlacklist: props.groupBlacklist ?? d.groupBlacklist,
    renamePolicy: props.renamePolicy ?? d.renamePolicy,
    maxWorkers: props.maxWorkers ?? d.maxWorkers,
    tableRemovalPolicy: props.tableRemovalPolicy ?? d.tableRemovalPolicy,
  };
}

/** The problems `check` finds in a value known at synth time; none for a token. */
function concrete<T>(value: T | undefined, check: (value: T) => string[]): string[] {
  if (value === undefined || Token.isUnresolved(value)) return [];
  return check(value);
}

function choiceProblems<T extends string | boolean>(
  path: string,
  value: Setting<T> | undefined,
  choices: readonly T[],
): string[] {
  if (value === undefined || Token.isUnresolved(value)) return [];
  if ((choices as readonly unknown[]).includes(value)) return [];
  return [
    `${path}: ${JSON.stringify(value)} is not one of ${choices.map((c) => JSON.stringify(c)).join(", ")} (or a deploy-time choice among them)`,
  ];
}

function clusterProblems(side: "source" | "target", cluster: ClusterProps): string[] {
  const pattern = (key: "bootstrapServers" | "secretArn" | "mskClusterArn", name: keyof typeof PATTERNS) =>
    concrete(cluster[key], (value) =>
      new RegExp(PATTERNS[name]).test(value)
        ? []
        : [`${side}.${key}: ${JSON.stringify(value)} does not match ${PATTERNS[name]}`],
    );
  const problems = [
    ...pattern("bootstrapServers", "brokers"),
    ...pattern("secretArn", "secretArn"),
    ...pattern("mskClusterArn", "mskClusterArn"),
    ...choiceProblems(`${side}.tls`, cluster.tls, [true, false]),
    ...choiceProblems(`${side}.saslMechanism`, cluster.saslMechanism, SASL_MECHANISMS),
  ];
  // The same cross-field rules the functions' config enforces, caught before a deploy.
  const sasl = Token.isUnresolved(cluster.saslMechanism) ? undefined : cluster.saslMechanism;
  if (sasl === "aws-msk-iam" && (cluster.tls ?? REPLICATOR_DEFAULTS.tls) === false)
    problems.push(`${side}.tls: must be true with saslMechanism aws-msk-iam (MSK serves IAM over TLS only)`);
  if ((sasl === "plain" || sasl?.startsWith("scram")) && cluster.secretArn === undefined)
    problems.push(
      `${side}.secretArn: required with saslMechanism ${sasl} (the secret holds the credentials)`,
    );
  return problems;
}

/** `workers` within 1..maxWorkers and a tick the schedule offers. */
function fleetProblems(props: KafkaReplicatorProps): string[] {
  const max = props.maxWorkers ?? REPLICATOR_DEFAULTS.maxWorkers;
  const problems: string[] = [];
  if (Token.isUnresolved(max) || !Number.isInteger(max) || max < 1 || max > MAX_FLEET_WORKERS)
    problems.push(
      `maxWorkers: ${String(max)} must be a whole number from 1 to ${MAX_FLEET_WORKERS}, known at synth time`,
    );
  problems.push(
    ...concrete(props.workers, (w) =>
      Number.isInteger(w) && w >= 1 && w <= max
        ? []
        : [`workers: ${w} must be a whole number from 1 to maxWorkers (${max})`],
    ),
    ...concrete(props.scheduleMinutes, (m) =>
      (SCHEDULE_MINUTES as readonly number[]).includes(m)
        ? []
        : [
            `scheduleMinutes: ${m} must be one of 1..${SCHEDULE_MINUTES.length} (a run lasts its tick plus the overlap with the next, at most 15 minutes)`,
          ],
    ),
  );
  return problems;
}

function vpcProblems(vpc: VpcPlacementProps | undefined): string[] {
  if (vpc === undefined) return [];
  return (["subnetIds", "securityGroupIds"] as const)
    .filter((key) => vpc[key].length === 0)
    .map((key) => `vpc.${key}: must list at least one id`);
}
