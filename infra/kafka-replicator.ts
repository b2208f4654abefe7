/**
 * The kafka-mirror deployment of one region: the lease table, the `replicate` and `lag` functions
 * bundled locally with esbuild, their schedules, least-privilege IAM, and optional VPC placement.
 * No replication logic lives here; the functions read everything from environment variables that
 * this construct fills from its props (CloudFormation parameters in the stack). The props, their
 * checks and defaults are in replicator-props.ts, replicator-props-schema.ts and
 * replicator-defaults.ts.
 *
 * Timing arithmetic (why the numbers fit together; README "Timing"), for a tick of T minutes:
 *  - runs of a slot overlap: the replicate function's timeout is T x 60 s + RUN_OVERLAP_MS (80 s,
 *    functions/timing.ts), so ticks of 1..13 minutes fit in Lambda's 15;
 *  - a run drains from its start + T + 10 s (the next tick's run of its slot has started and
 *    heartbeated), handing its partitions over; its hard deadline is its remaining time minus
 *    10 s (RUN_SAFETY_MARGIN_MS), and writes stop 2 x target.requestTimeoutMs (30 s) before that,
 *    which leaves the handoffs 30 s;
 *  - no lease outlives its holder's deadline (the worker caps every expiry at it);
 *  - reserved concurrency is 2 x `Workers`: each slot's ending run and its successor overlap,
 *    and a run that overstays still cannot add a third;
 *  - leases.durationMs (60 s) bounds how long a crashed worker's partitions wait, independent of
 *    the tick; renewals every 10 s keep a live worker's leases.
 */
import { CfnCondition, CfnMapping, Duration, Fn, Stack, Token } from "aws-cdk-lib";
import type { Rule } from "aws-cdk-lib/aws-events";
import type { NodejsFunction } from "aws-cdk-lib/aws-lambda-nodejs";
import { Construct } from "constructs";
import { TICK_SECONDS_VARIABLE } from "../functions/runtime.js";
import { FUNCTIONS, type FunctionName, functionsGranted } from "../functions/table.js";
import { envVariableName } from "../lib/config/load.js";
import { TRANSACTIONAL_ID_PREFIX } from "../lib/kafka/produce/transactional-id.js";
import { ALIAS_SEPARATOR } from "../lib/topics/rename.js";
import { LeaseTable } from "./lease-table.js";
import { SCHEDULE_MINUTES } from "./replicator-defaults.js";
import { replicatorFunction } from "./replicator-function.js";
import { grantLeaseTable, grantMskIam, grantSecret } from "./replicator-grants.js";
import type { KafkaReplicatorProps, ResolvedReplicatorProps } from "./replicator-props.js";
import { settingText } from "./replicator-props.js";
import { resolveReplicatorProps } from "./replicator-props-schema.js";
import { lagSchedule, workerSchedules } from "./worker-schedules.js";

type Fields = Readonly<Record<string, string>>;
/** Config sections → fields → values (tokens allowed); "" is unset. */
export interface FunctionConfig {
  readonly source: Fields & { readonly alias: string };
  readonly target: Fields;
  readonly topics: Fields;
  readonly groups: Fields;
  readonly leases: Fields & { readonly table: string };
}

/** Each section with its fields, in the config's order. */
export function configSections(config: FunctionConfig): [string, Fields][] {
  const { source, target, topics, groups, leases } = config;
  return Object.entries({ source, target, topics, groups, leases });
}

export class KafkaReplicator extends Construct {
  public readonly leases: LeaseTable;
  public readonly replicateFunction: NodejsFunction;
  public readonly lagFunction: NodejsFunction;
  /** The value of the `service` metric dimension both functions publish under. */
  public readonly serviceName: string;
  /** One rule per worker slot. */
  public readonly workerRules: Rule[];
  /** The config both functions run with (their environment), by section and field. */
  public readonly config: FunctionConfig;

  /** @throws ReplicatorError CONFIG_INVALID listing every bad prop known at synth time. */
  constructor(scope: Construct, id: string, input: KafkaReplicatorProps) {
    super(scope, id);
    const props = resolveReplicatorProps(input);
    this.serviceName = Stack.of(this).stackName;
    this.leases = new LeaseTable(this, "Leases", { removalPolicy: props.tableRemovalPolicy });

    const ticks = new CfnMapping(this, "Ticks", {
      mapping: Object.fromEntries(
        SCHEDULE_MINUTES.map((m) => [
          String(m),
          {
            expression: `rate(${m} ${m === 1 ? "minute" : "minutes"})`,
            timeoutSeconds: FUNCTIONS.replicate.timeout.perTick(m),
            tickSeconds: m * 60,
          },
        ]),
      ),
    });
    const tick = Token.asString(props.scheduleMinutes);
    this.config = this.functionConfig(props);
    const environment = this.environment();
    const tickSeconds = Token.asString(ticks.findInMap(tick, "tickSeconds"));
    const vpc = props.vpc === undefined ? {} : { vpc: props.vpc };
    this.replicateFunction = replicatorFunction(this, FUNCTIONS.replicate.id, "replicate", {
      timeout: Duration.seconds(Token.asNumber(ticks.findInMap(tick, "timeoutSeconds"))),
      reservedConcurrentExecutions: this.reservedConcurrency(props),
      // Only replicate drains (lag runs are short and never overlap).
      environment: { ...environment, [TICK_SECONDS_VARIABLE]: tickSeconds },
      description: FUNCTIONS.replicate.description,
      ...vpc,
    });
    this.lagFunction = replicatorFunction(this, FUNCTIONS.lag.id, "lag", {
      timeout: Duration.seconds(FUNCTIONS.lag.timeout.seconds),
      reservedConcurrentExecutions: 1,
      environment,
      description: FUNCTIONS.lag.description,
      ...vpc,
    });
    this.grant(props);
    this.workerRules = workerSchedules(this, this.replicateFunction, {
      ...props,
      expression: ticks.findInMap(tick, "expression"),
    });
    lagSchedule(this, this.lagFunction);
  }

  /**
   * Two runs per slot during the overlap. CloudFormation cannot multiply a parameter, so a
   * deploy-time Workers is looked up in a mapping of 1..maxWorkers.
   */
  private reservedConcurrency(props: ResolvedReplicatorProps): number {
    if (!Token.isUnresolved(props.workers)) return 2 * props.workers;
    const fleet = new CfnMapping(this, "Fleet", {
      mapping: Object.fromEntries(
        Array.from({ length: props.maxWorkers }, (_, i) => [String(i + 1), { reserved: 2 * (i + 1) }]),
      ),
    });
    return Token.asNumber(fleet.findInMap(Token.asString(props.workers), "reserved"));
  }

  /**
   * The config the functions run with, by section and field, as strings (tokens for parameters);
   * "" is unset (the config's default). Their environment and the stack's CLI config output are
   * both made from it, so a CLI pointed at the stack runs exactly the functions' config.
   */
  private functionConfig(props: ResolvedReplicatorProps): FunctionConfig {
    const cluster = (c: ResolvedReplicatorProps["source"] | ResolvedReplicatorProps["target"]) => ({
      brokers: c.bootstrapServers,
      tls: settingText(c.tls),
      saslMechanism: settingText(c.saslMechanism ?? ""),
      secretArn: c.secretArn ?? "",
    });
    return {
      source: { ...cluster(props.source), alias: props.source.alias },
      target: {
        ...cluster(props.target),
        fencing: settingText(props.target.fencing),
        copy: settingText(props.target.copy),
      },
      topics: {
        whitelist: props.whitelist,
        blacklist: props.blacklist,
        rename: settingText(props.renamePolicy),
      },
      groups: { whitelist: props.groupWhitelist, blacklist: props.groupBlacklist },
      leases: { table: this.leases.table.tableName },
    };
  }

  /** Every config field as a variable named by the loader's own rule. */
  private environment(): Record<string, string> {
    const env: Record<string, string> = { POWERTOOLS_SERVICE_NAME: this.serviceName };
    for (const [section, fields] of configSections(this.config))
      for (const [key, value] of Object.entries(fields)) env[envVariableName(section, key)] = value;
    return env;
  }

  /** The functions the table (functions/table.ts) gives `grant`. */
  private functionsGranted(grant: Parameters<typeof functionsGranted>[0]): NodejsFunction[] {
    const built: Record<FunctionName, NodejsFunction> = {
      replicate: this.replicateFunction,
      lag: this.lagFunction,
    };
    return functionsGranted(grant).map((name) => built[name]);
  }

  /** The table, the secrets and the MSK clusters, each to the functions that use them (functions/table.ts). */
  private grant(props: ResolvedReplicatorProps): void {
    for (const fn of this.functionsGranted("leaseTable")) grantLeaseTable(fn, this.leases.table);
    const secrets = this.functionsGranted("secrets");
    grantSecret(this, secrets, props.source.secretArn, "Source");
    grantSecret(this, secrets, props.target.secretArn, "Target");
    // The source is only read (both functions): every topic, as the Whitelist is a regular
    // expression IAM cannot express and matching topics appear without a deploy.
    grantMskIam(this, this.functionsGranted("sourceRead"), props.source.mskClusterArn, "Source", {
      cluster: ["kafka-cluster:Connect", "kafka-cluster:DescribeCluster"],
      // DescribeTopicDynamicConfiguration: config sync reads the source topics' configs.
      topics: [
        "kafka-cluster:DescribeTopic",
        "kafka-cluster:DescribeTopicDynamicConfiguration",
        "kafka-cluster:ReadData",
      ],
      topicPrefix: "",
      topicsReason:
        "read-only (DescribeTopic, DescribeTopicDynamicConfiguration, ReadData) on the source cluster's topics: the Whitelist is a regular expression IAM cannot express, and topics matching it are created without a deploy (the lag function discovers them)",
    });
    this.grantGroupSync(props);
    // Only replicate writes to and creates target topics, and reads them too: exactly-once reads
    // a target partition's tail (provenance headers) when it takes a partition over and after a
    // write of unknown outcome.
    grantMskIam(this, this.functionsGranted("targetWrite"), props.target.mskClusterArn, "Target", {
      cluster: [
        "kafka-cluster:Connect",
        "kafka-cluster:DescribeCluster",
        "kafka-cluster:WriteDataIdempotently",
      ],
      // AlterTopic grows a target whose source gained partitions (CreatePartitions); the dynamic
      // configuration actions read and SET the synced topic configs.
      topics: [
        "kafka-cluster:DescribeTopic",
        "kafka-cluster:CreateTopic",
        "kafka-cluster:AlterTopic",
        "kafka-cluster:DescribeTopicDynamicConfiguration",
        "kafka-cluster:AlterTopicDynamicConfiguration",
        "kafka-cluster:WriteData",
        "kafka-cluster:ReadData",
      ],
      topicPrefix: this.targetTopicPrefix(props),
      topicsReason:
        "the target topics replicate creates, grows, configures, writes and reads its copies' tails in: with RenamePolicy=prefix only <SourceAlias>.*; with identity they carry the source names, which follow the Whitelist regular expression IAM cannot express and appear without a deploy",
      // Fenced writes go through one transactional.id per target partition, all named
      // kafka-mirror.<alias>/<topic>/<partition> (lib/kafka/produce/transactional-id.ts): nothing else.
      transactionalIds: {
        actions: ["kafka-cluster:DescribeTransactionalId", "kafka-cluster:AlterTransactionalId"],
        prefix: Fn.join("", [TRANSACTIONAL_ID_PREFIX, props.source.alias, "/"]),
        reason:
          "one transactional.id per target partition, created as topics and partitions appear; the wildcard covers only ids under this source alias's kafka-mirror prefix",
      },
    });
  }

  /**
   * The lag function's consumer-group offset sync (lib/offsets): it reads the source groups'
   * offsets, and on the target reads the copies (provenance) and describes and commits groups.
   * Granted whenever the cluster is MSK IAM, as GroupWhitelist may change without a new policy.
   */
  private grantGroupSync(props: ResolvedReplicatorProps): void {
    const reason =
      "every consumer group of the cluster: GroupWhitelist is a regular expression IAM cannot express, and groups matching it appear without a deploy";
    const cluster = ["kafka-cluster:Connect", "kafka-cluster:DescribeCluster"];
    const groupSync = this.functionsGranted("groupSync");
    grantMskIam(this, groupSync, props.source.mskClusterArn, "SourceGroupSync", {
      cluster,
      topics: ["kafka-cluster:DescribeTopic"],
      topicPrefix: "",
      topicsReason: "the offsets of source groups are fetched per topic; the topics follow the Whitelist",
      groups: { actions: ["kafka-cluster:DescribeGroup"], reason },
      conditionSide: "Source",
    });
    grantMskIam(this, groupSync, props.target.mskClusterArn, "TargetGroupSync", {
      cluster,
      topics: ["kafka-cluster:DescribeTopic", "kafka-cluster:ReadData"],
      topicPrefix: this.targetTopicPrefix(props),
      topicsReason: "the target topics whose copies translation reads (provenance headers): as for replicate",
      groups: { actions: ["kafka-cluster:DescribeGroup", "kafka-cluster:AlterGroup"], reason },
      conditionSide: "Target",
    });
  }

  /** `<alias>.` when target topics are prefixed, "" (every topic) when they keep source names. */
  private targetTopicPrefix(props: ResolvedReplicatorProps): string {
    const prefixed = Fn.join("", [props.source.alias, ALIAS_SEPARATOR]);
    if (!Token.isUnresolved(props.renamePolicy)) return props.renamePolicy === "prefix" ? prefixed : "";
    // One condition, however many grants ask.
    const condition =
      (this.node.tryFindChild("TargetTopicsPrefixed") as CfnCondition | undefined) ??
      new CfnCondition(this, "TargetTopicsPrefixed", {
        expression: Fn.conditionEquals(props.renamePolicy, "prefix"),
      });
    return Token.asString(Fn.conditionIf(condition.logicalId, prefixed, ""));
  }
}
