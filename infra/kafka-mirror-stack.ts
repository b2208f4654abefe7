/**
 * One region's kafka-mirror stack: CloudFormation parameters mapped onto the KafkaReplicator
 * construct and its alarms. Every operational setting is a parameter, so changing the whitelist
 * (or the fleet size, the tick, the thresholds) is `cdk deploy --parameters ...`, not a code change.
 */
import { CfnParameter, Stack, type StackProps } from "aws-cdk-lib";
import type { Construct } from "constructs";
import { SASL_MECHANISMS } from "../lib/config/schema.js";
import { RENAME_MODES } from "../lib/topics/rename.js";
import { KafkaReplicator, SCHEDULE_MINUTES, type VpcPlacementProps } from "./kafka-replicator.js";
import { acknowledgeNagFindings } from "./nag.js";
import { ReplicatorAlarms } from "./replicator-alarms.js";

/** Most concurrent replicate invocations the Workers parameter allows. */
export const MAX_WORKERS = 10;

const SECRET_ARN_PATTERN =
  "^$|^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:[A-Za-z0-9/_+=.@-]+$";
const MSK_CLUSTER_ARN_PATTERN =
  "^$|^arn:aws[a-z-]*:kafka:[a-z0-9-]+:[0-9]{12}:cluster/[A-Za-z0-9-]+/[A-Za-z0-9-]+$";
const BROKERS_PATTERN = "^[A-Za-z0-9._-]+:[0-9]{1,5}(,[A-Za-z0-9._-]+:[0-9]{1,5})*$";

export interface KafkaMirrorStackProps extends StackProps {
  /** Run the functions in these subnets (private clusters). @default outside any VPC */
  readonly vpc?: VpcPlacementProps;
}

export class KafkaMirrorStack extends Stack {
  public readonly replicator: KafkaReplicator;
  public readonly alarms: ReplicatorAlarms;
  /** Kept for the lease-table tests and tools that address the table directly. */
  public get leases() {
    return this.replicator.leases;
  }

  constructor(scope: Construct, id: string, props: KafkaMirrorStackProps = {}) {
    super(scope, id, {
      description: "kafka-mirror: serverless Kafka-to-Kafka replication (one region's source to the target)",
      ...props,
    });
    const text = (
      name: string,
      description: string,
      extra: Partial<ConstructorParameters<typeof CfnParameter>[2]> = {},
    ) => new CfnParameter(this, name, { type: "String", description, ...extra });

    const whitelist = text(
      "Whitelist",
      "Whole-name regex of the topics to mirror, e.g. BIN-BI-TOPIC|PUSH-BI-TOPIC",
      {
        minLength: 1,
      },
    );
    const blacklist = text(
      "Blacklist",
      "Whole-name regex of topics never to mirror (wins over Whitelist); empty for none",
      {
        default: "",
      },
    );
    const sourceBrokers = text(
      "SourceBootstrapServers",
      "Source cluster bootstrap servers, host:port,host:port",
      {
        allowedPattern: BROKERS_PATTERN,
      },
    );
    const targetBrokers = text(
      "TargetBootstrapServers",
      "Target (central) cluster bootstrap servers, host:port,...",
      {
        allowedPattern: BROKERS_PATTERN,
      },
    );
    // Required, no default: the alias is the provenance every copied record carries, and the
    // exactly-once tail scan counts a record as ours by it. Two regional stacks left on a shared
    // default would stamp one alias into one central topic and each skip the other's offsets as
    // already copied (lost records). Deriving it from the region would be unique but unstable: it
    // names the stack, not the source cluster, so moving a source's stack to another region would
    // no longer recognise its own copies (duplicates) and would rename `prefix` topics.
    const sourceAlias = text(
      "SourceAlias",
      "Name of the source cluster, unique among all sources writing to the target; provenance of every copy, prefix of target topics with RenamePolicy=prefix",
      {
        allowedPattern: "^[a-zA-Z0-9._-]{1,100}$",
        constraintDescription:
          "required: a name for the source cluster of 1 to 100 characters [a-zA-Z0-9._-], unique among the sources mirrored into the same target (e.g. idc1)",
      },
    );
    const rename = text("RenamePolicy", "identity keeps topic names; prefix writes <SourceAlias>.<topic>", {
      default: "identity",
      allowedValues: [...RENAME_MODES],
    });
    const fencing = text(
      "TargetFencing",
      "transactional: a new holder of a partition fences the old one at the target (needs transactions); none: the lease alone, weaker",
      { default: "transactional", allowedValues: ["transactional", "none"] },
    );
    const workers = new CfnParameter(this, "Workers", {
      type: "Number",
      description: `Concurrent replicate invocations per tick (1-${MAX_WORKERS}); also their reserved concurrency`,
      default: 3,
      allowedValues: Array.from({ length: MAX_WORKERS }, (_, i) => String(i + 1)),
    });
    const scheduleRate = new CfnParameter(this, "ScheduleRate", {
      type: "Number",
      description:
        "Replication tick in minutes (1-15): replicate runs start every tick and end before the next",
      default: 5,
      allowedValues: SCHEDULE_MINUTES.map(String),
    });
    const lagRecords = new CfnParameter(this, "LagRecordsThreshold", {
      type: "Number",
      description: "Alarm when a topic has more records than this not yet copied",
      default: 100_000,
      minValue: 0,
    });
    const lagSeconds = new CfnParameter(this, "LagSecondsThreshold", {
      type: "Number",
      description: "Alarm when the oldest record not yet copied is older than this (seconds)",
      default: 900,
      minValue: 0,
    });
    const alarmEmail = text("AlarmEmail", "E-mail address subscribed to the alarm topic; empty for none", {
      default: "",
      allowedPattern: "^$|^[^@\\s]+@[^@\\s]+$",
    });
    const cluster = (side: "Source" | "Target") => ({
      tls: text(`${side}Tls`, `Connect to the ${side.toLowerCase()} cluster over TLS`, {
        default: "false",
        allowedValues: ["true", "false"],
      }).valueAsString,
      saslMechanism: text(`${side}SaslMechanism`, `SASL mechanism of the ${side.toLowerCase()} cluster`, {
        default: "none",
        allowedValues: [...SASL_MECHANISMS],
      }).valueAsString,
      secretArn: text(
        `${side}SecretArn`,
        `Secrets Manager secret (JSON: username, password, ca, cert, key) for the ${side.toLowerCase()} cluster; empty for none`,
        { default: "", allowedPattern: SECRET_ARN_PATTERN },
      ).valueAsString,
      mskClusterArn: text(
        `${side}MskClusterArn`,
        `ARN of the ${side.toLowerCase()} MSK cluster, with ${side}SaslMechanism=aws-msk-iam: grants the functions access to it; empty otherwise`,
        { default: "", allowedPattern: MSK_CLUSTER_ARN_PATTERN },
      ).valueAsString,
    });

    this.replicator = new KafkaReplicator(this, "Replicator", {
      source: {
        ...cluster("Source"),
        bootstrapServers: sourceBrokers.valueAsString,
        alias: sourceAlias.valueAsString,
      },
      target: {
        ...cluster("Target"),
        bootstrapServers: targetBrokers.valueAsString,
        fencing: fencing.valueAsString,
      },
      whitelist: whitelist.valueAsString,
      blacklist: blacklist.valueAsString,
      renamePolicy: rename.valueAsString,
      workers: workers.valueAsNumber,
      maxWorkers: MAX_WORKERS,
      scheduleMinutes: scheduleRate.valueAsNumber,
      ...(props.vpc === undefined ? {} : { vpc: props.vpc }),
    });
    this.alarms = new ReplicatorAlarms(this, "Alarms", {
      serviceName: this.replicator.serviceName,
      replicateFunction: this.replicator.replicateFunction,
      lagFunction: this.replicator.lagFunction,
      lagRecordsThreshold: lagRecords.valueAsNumber,
      lagSecondsThreshold: lagSeconds.valueAsNumber,
      alarmEmail: alarmEmail.valueAsString,
    });
    acknowledgeNagFindings(this);
  }
}
