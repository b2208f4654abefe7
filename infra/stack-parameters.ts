/**
 * The stack's CloudFormation parameters, each mapped onto a KafkaReplicator or ReplicatorAlarms
 * prop. Every choice is a parameter restricted to the values the prop's type admits
 * (`deployTimeChoice`), so CloudFormation refuses anything else before a function sees it.
 */
import { CfnParameter, type CfnParameterProps, type Stack } from "aws-cdk-lib";
import { SASL_MECHANISMS } from "../lib/config/schema.js";
import { RENAME_MODES } from "../lib/topics/rename.js";
import type { ReplicatorAlarmsProps } from "./replicator-alarms.js";
import {
  MAX_FLEET_WORKERS,
  SCHEDULE_MINUTES,
  TARGET_COPY_MODES,
  TARGET_FENCING_MODES,
} from "./replicator-defaults.js";
import {
  type ClusterProps,
  deployTimeChoice,
  type KafkaReplicatorProps,
  PATTERNS,
} from "./replicator-props.js";

/** Most concurrent replicate invocations the Workers parameter allows. */
export const MAX_WORKERS = MAX_FLEET_WORKERS;

/** The text parameter `name`. */
function text(stack: Stack, name: string, description: string, extra: Partial<CfnParameterProps> = {}) {
  return new CfnParameter(stack, name, { type: "String", description, ...extra });
}

export interface StackParameters {
  /** The replicator's props (the VPC placement comes from the app's context). */
  readonly replicator: Omit<KafkaReplicatorProps, "vpc">;
  readonly alarms: Pick<ReplicatorAlarmsProps, "lagRecordsThreshold" | "lagSecondsThreshold" | "alarmEmail">;
}

/** Every parameter, created in the order the console lists them. */
export function stackParameters(stack: Stack): StackParameters {
  const topics = topicParameters(stack);
  const fleet = fleetParameters(stack);
  const alarms = alarmParameters(stack);
  const source = clusterParameters(stack, "Source");
  const target = clusterParameters(stack, "Target");
  return {
    replicator: {
      source: { ...source, bootstrapServers: topics.sourceBrokers, alias: topics.sourceAlias },
      target: { ...target, bootstrapServers: topics.targetBrokers, fencing: fleet.fencing, copy: fleet.copy },
      whitelist: topics.whitelist,
      blacklist: topics.blacklist,
      ...groupParameters(stack),
      renamePolicy: topics.renamePolicy,
      workers: fleet.workers,
      maxWorkers: MAX_WORKERS,
      scheduleMinutes: fleet.scheduleMinutes,
    },
    alarms,
  };
}

/** How the fleet runs: the target fencing, the worker count, the tick. */
function fleetParameters(stack: Stack) {
  const fencing = text(
    stack,
    "TargetFencing",
    "transactional: a new holder of a partition fences the old one at the target (needs transactions); none: the lease alone, weaker",
    { default: "transactional", allowedValues: [...TARGET_FENCING_MODES] },
  );
  const copy = text(
    stack,
    "TargetCopy",
    "records: each record decoded and written with a provenance header; batches: source batches passed through byte for byte (needs TargetFencing transactional)",
    { default: "records", allowedValues: [...TARGET_COPY_MODES] },
  );
  const workers = new CfnParameter(stack, "Workers", {
    type: "Number",
    description: `Worker slots: replicate invocations per tick (1-${MAX_WORKERS}); reserved concurrency is twice this (runs of a slot overlap)`,
    default: 3,
    allowedValues: Array.from({ length: MAX_WORKERS }, (_, i) => String(i + 1)),
  });
  const scheduleRate = new CfnParameter(stack, "ScheduleRate", {
    type: "Number",
    description: `Replication tick in minutes (1-${SCHEDULE_MINUTES.length}): replicate runs start every tick and hand over to the next run shortly after it starts`,
    default: 5,
    allowedValues: SCHEDULE_MINUTES.map(String),
  });
  return {
    fencing: deployTimeChoice(fencing, TARGET_FENCING_MODES),
    copy: deployTimeChoice(copy, TARGET_COPY_MODES),
    workers: workers.valueAsNumber,
    scheduleMinutes: scheduleRate.valueAsNumber,
  };
}

/** What is copied and how it is named: the topic patterns, the brokers, the alias. */
function topicParameters(stack: Stack) {
  const whitelist = text(
    stack,
    "Whitelist",
    "Whole-name regex of the topics to mirror, e.g. BIN-BI-TOPIC|PUSH-BI-TOPIC",
    {
      minLength: 1,
    },
  );
  const blacklist = text(
    stack,
    "Blacklist",
    "Whole-name regex of topics never to mirror (wins over Whitelist); empty for none",
    {
      default: "",
    },
  );
  const brokers = (side: string, description: string) =>
    text(stack, `${side}BootstrapServers`, description, { allowedPattern: PATTERNS.brokers }).valueAsString;
  const sourceBrokers = brokers("Source", "Source cluster bootstrap servers, host:port,host:port");
  const targetBrokers = brokers("Target", "Target (central) cluster bootstrap servers, host:port,...");
  // Required, no default: the alias is the provenance every copied record carries, and the
  // exactly-once tail scan counts a record as ours by it. Two regional stacks left on a shared
  // default would stamp one alias into one central topic and each skip the other's offsets as
  // already copied (lost records). Deriving it from the region would be unique but unstable: it
  // names the stack, not the source cluster, so moving a source's stack to another region would
  // no longer recognise its own copies (duplicates) and would rename `prefix` topics.
  const sourceAlias = text(
    stack,
    "SourceAlias",
    "Name of the source cluster, unique among all sources writing to the target; provenance of every copy, prefix of target topics with RenamePolicy=prefix",
    {
      allowedPattern: PATTERNS.alias,
      constraintDescription:
        "required: a name for the source cluster of 1 to 100 characters [a-zA-Z0-9._-], unique among the sources mirrored into the same target (e.g. idc1)",
    },
  );
  const rename = text(
    stack,
    "RenamePolicy",
    "identity keeps topic names; prefix writes <SourceAlias>.<topic>",
    {
      default: "identity",
      allowedValues: [...RENAME_MODES],
    },
  );
  return {
    whitelist: whitelist.valueAsString,
    blacklist: blacklist.valueAsString,
    sourceBrokers,
    targetBrokers,
    sourceAlias: sourceAlias.valueAsString,
    renamePolicy: deployTimeChoice(rename, RENAME_MODES),
  };
}

/** Which consumer groups' offsets the lag function syncs to the target (lib/offsets). */
function groupParameters(stack: Stack): { groupWhitelist: string; groupBlacklist: string } {
  const groups = (name: string, description: string) =>
    text(stack, name, description, { default: "" }).valueAsString;
  return {
    groupWhitelist: groups(
      "GroupWhitelist",
      "Whole-name regex of consumer groups whose committed offsets are translated and synced to the target every minute; empty for none",
    ),
    groupBlacklist: groups(
      "GroupBlacklist",
      "Whole-name regex of consumer groups never synced (wins over GroupWhitelist); empty for none",
    ),
  };
}

/** How one side's cluster is reached: TLS, SASL, its secret and MSK cluster (for IAM access). */
function clusterParameters(stack: Stack, side: "Source" | "Target"): Omit<ClusterProps, "bootstrapServers"> {
  const lower = side.toLowerCase();
  const tls = text(stack, `${side}Tls`, `Connect to the ${lower} cluster over TLS`, {
    default: "false",
    allowedValues: ["true", "false"],
  });
  const sasl = text(stack, `${side}SaslMechanism`, `SASL mechanism of the ${lower} cluster`, {
    default: "none",
    allowedValues: [...SASL_MECHANISMS],
  });
  const secretArn = text(
    stack,
    `${side}SecretArn`,
    `Secrets Manager secret (JSON: username, password, ca, cert, key) for the ${lower} cluster; empty for none`,
    { default: "", allowedPattern: `^$|${PATTERNS.secretArn}` },
  );
  const mskClusterArn = text(
    stack,
    `${side}MskClusterArn`,
    `ARN of the ${lower} MSK cluster, with ${side}SaslMechanism=aws-msk-iam: grants the functions access to it; empty otherwise`,
    { default: "", allowedPattern: `^$|${PATTERNS.mskClusterArn}` },
  );
  return {
    tls: deployTimeChoice(tls, [true, false]),
    saslMechanism: deployTimeChoice(sasl, SASL_MECHANISMS),
    secretArn: secretArn.valueAsString,
    mskClusterArn: mskClusterArn.valueAsString,
  };
}

/** The alarms' thresholds and recipient. */
function alarmParameters(stack: Stack): StackParameters["alarms"] {
  const threshold = (name: string, description: string, fallback: number) =>
    new CfnParameter(stack, name, { type: "Number", description, default: fallback, minValue: 0 })
      .valueAsNumber;
  return {
    lagRecordsThreshold: threshold(
      "LagRecordsThreshold",
      "Alarm when a topic has more records than this not yet copied",
      100_000,
    ),
    lagSecondsThreshold: threshold(
      "LagSecondsThreshold",
      "Alarm when the oldest record not yet copied is older than this (seconds)",
      900,
    ),
    alarmEmail: text(stack, "AlarmEmail", "E-mail address subscribed to the alarm topic; empty for none", {
      default: "",
      allowedPattern: "^$|^[^@\\s]+@[^@\\s]+$",
    }).valueAsString,
  };
}
