/**
 * The KafkaReplicator's props checked with zod, in the house style of lib/config: strict sections
 * (an unknown key is refused, naming the keys allowed: a JavaScript caller's typo must not become
 * a silently ignored setting), one line per problem at its dotted path, all problems at once.
 *
 * A token (a CloudFormation parameter) passes: CloudFormation checks it at deploy time
 * (AllowedValues, AllowedPattern, the template rules). Only values known at synth time are
 * checked here.
 */
import { RemovalPolicy, Token } from "aws-cdk-lib";
import { z } from "zod";
import { describeValue, section } from "../lib/config/fields.js";
import { formatIssues } from "../lib/config/issues.js";
import { SASL_MECHANISMS } from "../lib/config/schema.js";
import { ReplicatorError } from "../lib/errors.js";
import { RESERVED_TOPIC_PREFIX } from "../lib/topics/names.js";
import { compileTopicPattern } from "../lib/topics/pattern.js";
import { RENAME_MODES } from "../lib/topics/rename.js";
import {
  MAX_FLEET_WORKERS,
  REPLICATOR_DEFAULTS,
  SCHEDULE_MINUTES,
  TARGET_COPY_MODES,
  TARGET_FENCING_MODES,
} from "./replicator-defaults.js";
import {
  type ClusterProps,
  type KafkaReplicatorProps,
  PATTERNS,
  type ResolvedReplicatorProps,
  type VpcPlacementProps,
} from "./replicator-props.js";

/** What is wrong with a concrete value, or null when it is fine. */
type Check = (value: unknown) => string | null;

/**
 * A prop that may be a token; a concrete value must pass `check`. Absent is refused when
 * `required`. Its issues are continuable, so the cross-field checks still run beside them.
 */
function setting(check: Check, required = false) {
  const checked = (base: z.ZodType) =>
    base.superRefine((value, ctx) => {
      if (value === undefined || Token.isUnresolved(value)) return;
      const problem = check(value);
      if (problem !== null) ctx.addIssue({ code: "custom", input: value, message: problem });
    });
  return required
    ? checked(z.custom<unknown>((value) => value !== undefined, { error: "required" }))
    : checked(z.custom<unknown>()).optional();
}

const matches =
  (name: keyof typeof PATTERNS): Check =>
  (value) =>
    typeof value === "string" && new RegExp(PATTERNS[name]).test(value)
      ? null
      : `${describeValue(value)} does not match ${PATTERNS[name]}`;

const oneOf =
  (choices: readonly (string | boolean)[]): Check =>
  (value) =>
    choices.includes(value as string | boolean)
      ? null
      : `${describeValue(value)} is not one of ${choices.map((c) => JSON.stringify(c)).join(", ")} (or a deploy-time choice among them)`;

const alias: Check = (value) =>
  typeof value === "string" &&
  new RegExp(PATTERNS.alias).test(value) &&
  !`${value}.`.startsWith(RESERVED_TOPIC_PREFIX)
    ? null
    : `${describeValue(value)} must be 1 to 100 characters of [a-zA-Z0-9._-], not under "${RESERVED_TOPIC_PREFIX}"`;

/** A whole-name pattern, compiled by the checker the functions' config uses; "" only when `optional`. */
export function patternCheck(optional: boolean): Check {
  return (value) => {
    if (typeof value !== "string") return `expected a regular expression string, got ${describeValue(value)}`;
    if (value === "") return optional ? null : "must not be empty";
    const compiled = compileTopicPattern(value);
    return compiled.ok ? null : compiled.reason;
  };
}

const clusterShape = {
  bootstrapServers: setting(matches("brokers"), true),
  tls: setting(oneOf([true, false])),
  saslMechanism: setting(oneOf(SASL_MECHANISMS)),
  secretArn: setting(matches("secretArn")),
  mskClusterArn: setting(matches("mskClusterArn")),
} satisfies Record<keyof ClusterProps, z.ZodType>;

/** The cross-field rules the functions' config enforces, caught before a deploy. */
function clusterRules(cluster: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const sasl = Token.isUnresolved(cluster.saslMechanism) ? undefined : cluster.saslMechanism;
  if (sasl === "aws-msk-iam" && (cluster.tls ?? REPLICATOR_DEFAULTS.tls) === false)
    ctx.addIssue({
      code: "custom",
      path: ["tls"],
      input: cluster.tls,
      message: "must be true with saslMechanism aws-msk-iam (MSK serves IAM over TLS only)",
    });
  if ((sasl === "plain" || (typeof sasl === "string" && sasl.startsWith("scram"))) && !cluster.secretArn)
    ctx.addIssue({
      code: "custom",
      path: ["secretArn"],
      input: cluster.secretArn,
      message: `required with saslMechanism ${String(sasl)} (the secret holds the credentials)`,
    });
}

const idList = (prefix: string) => {
  const error = (issue: { input?: unknown }) =>
    `expected a list of ${prefix}... ids, at least one, got ${describeValue(issue.input)}`;
  return z
    .array(
      setting(
        (v) =>
          typeof v === "string" && v.startsWith(prefix)
            ? null
            : `expected ${prefix}..., got ${describeValue(v)}`,
        true,
      ),
      { error },
    )
    .min(1, { error });
};

/** Subnets and security groups by id, as the context key `kafka-mirror:vpc` gives them per region. */
export const vpcPlacementSchema = section({
  subnetIds: idList("subnet-"),
  securityGroupIds: idList("sg-"),
} satisfies Record<keyof VpcPlacementProps, z.ZodType>);

const fleetRules = (props: Record<string, unknown>, ctx: z.RefinementCtx): void => {
  const max = props.maxWorkers ?? REPLICATOR_DEFAULTS.maxWorkers;
  const maxOk =
    typeof max === "number" &&
    !Token.isUnresolved(max) &&
    Number.isInteger(max) &&
    max >= 1 &&
    max <= MAX_FLEET_WORKERS;
  if (!maxOk)
    ctx.addIssue({
      code: "custom",
      path: ["maxWorkers"],
      input: max,
      message: `${describeValue(max)} must be a whole number from 1 to ${MAX_FLEET_WORKERS}, known at synth time`,
    });
  const w = props.workers;
  if (
    maxOk &&
    typeof w === "number" &&
    !Token.isUnresolved(w) &&
    !(Number.isInteger(w) && w >= 1 && w <= max)
  )
    ctx.addIssue({
      code: "custom",
      path: ["workers"],
      input: w,
      message: `${w} must be a whole number from 1 to maxWorkers (${max})`,
    });
};

const tick: Check = (m) =>
  (SCHEDULE_MINUTES as readonly unknown[]).includes(m)
    ? null
    : `${describeValue(m)} must be one of 1..${SCHEDULE_MINUTES.length} (a run lasts its tick plus the overlap with the next, at most 15 minutes)`;

const replicatorSchema = section({
  source: section({ ...clusterShape, alias: setting(alias, true) }).superRefine(clusterRules),
  target: section({
    ...clusterShape,
    fencing: setting(oneOf(TARGET_FENCING_MODES)),
    copy: setting(oneOf(TARGET_COPY_MODES)),
  }).superRefine(clusterRules),
  whitelist: setting(patternCheck(false), true),
  blacklist: setting(patternCheck(true)),
  renamePolicy: setting(oneOf(RENAME_MODES)),
  groupWhitelist: setting(patternCheck(true)),
  groupBlacklist: setting(patternCheck(true)),
  workers: setting(
    (w) => (typeof w === "number" ? null : `expected a number, got ${describeValue(w)}`),
    true,
  ),
  maxWorkers: z.custom<unknown>().optional(),
  scheduleMinutes: setting(tick, true),
  vpc: vpcPlacementSchema.optional(),
  tableRemovalPolicy: setting(oneOf(Object.values(RemovalPolicy))),
} satisfies Record<keyof KafkaReplicatorProps, z.ZodType>).superRefine(fleetRules);

/**
 * One line per problem at its dotted path, unknown keys first: a misspelt key explains the
 * "required" that follows from it.
 */
export function problemLines(issues: readonly z.core.$ZodIssue[]): string[] {
  const ordered = [...issues].sort(
    (a, b) => Number(a.code !== "unrecognized_keys") - Number(b.code !== "unrecognized_keys"),
  );
  return formatIssues(ordered).map((i) => `${i.path}: ${i.message}`);
}

/** Checks every prop, collecting all problems into one error; fills in the defaults. */
export function resolveReplicatorProps(props: KafkaReplicatorProps): ResolvedReplicatorProps {
  const result = replicatorSchema.safeParse(props);
  if (!result.success) {
    const problems = problemLines(result.error.issues);
    throw new ReplicatorError("CONFIG_INVALID", `invalid KafkaReplicator props: ${problems.join("; ")}`, {
      details: { problems },
    });
  }
  const d = REPLICATOR_DEFAULTS;
  return {
    ...props,
    source: { ...props.source, tls: props.source.tls ?? d.tls },
    target: {
      ...props.target,
      tls: props.target.tls ?? d.tls,
      fencing: props.target.fencing ?? d.fencing,
      copy: props.target.copy ?? d.copy,
    },
    blacklist: props.blacklist ?? d.blacklist,
    groupWhitelist: props.groupWhitelist ?? d.groupWhitelist,
    groupBlacklist: props.groupBlacklist ?? d.groupBlacklist,
    renamePolicy: props.renamePolicy ?? d.renamePolicy,
    maxWorkers: props.maxWorkers ?? d.maxWorkers,
    tableRemovalPolicy: props.tableRemovalPolicy ?? d.tableRemovalPolicy,
  };
}
