/**
 * The kafka-mirror deployment of one region: the lease table, the `replicate` and `lag` functions
 * bundled locally with esbuild, their schedules, least-privilege IAM, and optional VPC placement.
 * No replication logic lives here; the functions read everything from environment variables that
 * this construct fills from its props (CloudFormation parameters in the stack).
 *
 * Timing arithmetic (why the numbers fit together), for a tick of S minutes:
 *  - the replicate function's timeout is the tick, S x 60 s, so one run ends before the next
 *    tick starts;
 *  - a run's deadline is its remaining time minus 10 s (RUN_SAFETY_MARGIN_MS): the worker stops
 *    starting writes 2 x target.requestTimeoutMs (30 s) before the deadline, and after it
 *    checkpoints and releases its leases and flushes metrics inside those 10 s;
 *  - no lease outlives its holder's deadline (the worker caps every expiry at it), so the next
 *    tick's workers find every lease released or expired and never wait for one;
 *  - reserved concurrency is `Workers`, so a run that overstays cannot add a worker beyond the
 *    fleet size: the next tick's extra invocation is throttled, not run in parallel;
 *  - leases.durationMs (60 s) bounds how long a crashed worker's partitions wait, independent of
 *    the tick; renewals every 10 s keep a live worker's leases.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  CfnCondition,
  CfnMapping,
  CfnResource,
  Duration,
  Fn,
  type ICfnConditionExpression,
  RemovalPolicy,
  Stack,
  Token,
  Validations,
} from "aws-cdk-lib";
import { Rule, RuleTargetInput, Schedule } from "aws-cdk-lib/aws-events";
import { LambdaFunction } from "aws-cdk-lib/aws-events-targets";
import { Effect, Policy, PolicyStatement, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import { Architecture, type CfnFunction, CfnPermission, Runtime, Tracing } from "aws-cdk-lib/aws-lambda";
import { NodejsFunction, OutputFormat } from "aws-cdk-lib/aws-lambda-nodejs";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import { Construct, type IConstruct } from "constructs";
import { envVariableName } from "../lib/config/load.js";
import { LeaseTable } from "./lease-table.js";

const PROJECT_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Packages the bundle loads at run time with a local `require` (kafkajs internals, codecs). */
const COPIED_PACKAGES = ["kafkajs", "lz4js", "@bokuweb/zstd-wasm"] as const;

/** Ticks the schedule offers, in minutes (a Lambda runs 15 minutes at most). */
export const SCHEDULE_MINUTES = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] as const;

/** Lag is measured every minute, whatever the replication tick. */
const LAG_TIMEOUT = Duration.seconds(55);

export interface ClusterProps {
  /** Bootstrap `host:port` list, comma-separated. */
  readonly bootstrapServers: string;
  /** Connect over TLS. @default "false" */
  readonly tls?: string;
  /** none | plain | scram-sha-256 | scram-sha-512 | aws-msk-iam. @default "none" */
  readonly saslMechanism?: string;
  /** Secrets Manager secret holding this cluster's credentials; "" for none. @default "" */
  readonly secretArn?: string;
  /**
   * MSK cluster ARN, for `aws-msk-iam`: the functions get exactly the kafka-cluster actions their
   * side needs on it and its topics; "" for none. @default ""
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
    /** Names the source cluster (prefix of renamed topics). */
    readonly alias: string;
  };
  readonly target: ClusterProps & {
    /**
     * transactional | none (see the config's target.fencing); a token is allowed.
     * @default "transactional"
     */
    readonly fencing?: string;
  };
  /** Whole-name regex of the topics to mirror. */
  readonly whitelist: string;
  /** Whole-name regex of topics never mirrored; "" for none. @default "" */
  readonly blacklist?: string;
  /** identity | prefix. @default "identity" */
  readonly renamePolicy?: string;
  /**
   * Concurrent replicate invocations per tick; a token (CloudFormation parameter) is allowed.
   * Must be one of 1..maxWorkers.
   */
  readonly workers: number;
  /** How many worker schedules exist; each above `workers` is switched off by a condition. @default 10 */
  readonly maxWorkers?: number;
  /** Tick of the replicate schedule in minutes, 1..15; a token is allowed. */
  readonly scheduleMinutes: number;
  /** Optional VPC placement for private clusters. @default outside any VPC */
  readonly vpc?: VpcPlacementProps;
  /** @default RemovalPolicy.RETAIN (checkpoints survive stack deletion) */
  readonly tableRemovalPolicy?: RemovalPolicy;
}

export class KafkaReplicator extends Construct {
  public readonly leases: LeaseTable;
  public readonly replicateFunction: NodejsFunction;
  public readonly lagFunction: NodejsFunction;
  /** The value of the `service` metric dimension both functions publish under. */
  public readonly serviceName: string;
  /** One rule per worker slot. */
  public readonly workerRules: Rule[];

  constructor(scope: Construct, id: string, props: KafkaReplicatorProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.serviceName = stack.stackName;
    this.leases = new LeaseTable(this, "Leases", {
      ...(props.tableRemovalPolicy === undefined ? {} : { removalPolicy: props.tableRemovalPolicy }),
    });

    const ticks = new CfnMapping(this, "Ticks", {
      mapping: Object.fromEntries(
        SCHEDULE_MINUTES.map((m) => [
          String(m),
          { expression: `rate(${m} ${m === 1 ? "minute" : "minutes"})`, timeoutSeconds: m * 60 },
        ]),
      ),
    });
    const tick = Token.asString(props.scheduleMinutes);

    const environment = this.environment(props);
    this.replicateFunction = this.function("Replicate", "replicate", {
      timeout: Duration.seconds(Token.asNumber(ticks.findInMap(tick, "timeoutSeconds"))),
      reservedConcurrentExecutions: props.workers,
      environment,
      description:
        "kafka-mirror: copies leased source partitions to the target until shortly before its timeout",
      ...(props.vpc === undefined ? {} : { vpc: props.vpc }),
    });
    this.lagFunction = this.function("Lag", "lag", {
      timeout: LAG_TIMEOUT,
      reservedConcurrentExecutions: 1,
      environment,
      description: "kafka-mirror: publishes replication lag and creates lease items for new topics",
      ...(props.vpc === undefined ? {} : { vpc: props.vpc }),
    });

    const functions = [this.replicateFunction, this.lagFunction];
    for (const fn of functions) this.grantLeaseTable(fn);
    this.grantSecret(functions, props.source, "Source");
    this.grantSecret(functions, props.target, "Target");
    // The source is only read (both functions); only replicate writes to and creates target topics,
    // and reads them too: exactly-once reads a target partition's tail (provenance headers) when it
    // takes a partition over and after a write of unknown outcome.
    this.grantMskIam(functions, props.source, "Source", {
      cluster: ["kafka-cluster:Connect", "kafka-cluster:DescribeCluster"],
      topics: ["kafka-cluster:DescribeTopic", "kafka-cluster:ReadData"],
    });
    this.grantMskIam([this.replicateFunction], props.target, "Target", {
      cluster: [
        "kafka-cluster:Connect",
        "kafka-cluster:DescribeCluster",
        "kafka-cluster:WriteDataIdempotently",
      ],
      topics: [
        "kafka-cluster:DescribeTopic",
        "kafka-cluster:CreateTopic",
        "kafka-cluster:WriteData",
        "kafka-cluster:ReadData",
      ],
      // Fenced writes go through one transactional.id per target partition, all named
      // kafka-mirror.<alias>/<topic>/<partition> (lib/kafka/transactional-id.ts): nothing else.
      transactionalIds: {
        actions: ["kafka-cluster:DescribeTransactionalId", "kafka-cluster:AlterTransactionalId"],
        prefix: Fn.join("", ["kafka-mirror.", props.source.alias, "/"]),
        alias: props.source.alias,
      },
    });

    this.workerRules = this.workerSchedules(props, ticks.findInMap(tick, "expression"));
    new Rule(this, "LagSchedule", {
      description: "kafka-mirror: measure lag and discover topics every minute",
      schedule: Schedule.rate(Duration.minutes(1)),
      targets: [
        new LambdaFunction(this.lagFunction, {
          event: RuleTargetInput.fromObject({ source: "kafka-mirror.schedule", kind: "lag" }),
          retryAttempts: 0,
          maxEventAge: Duration.minutes(1),
        }),
      ],
    });
  }

  /** Every config field the functions read, by the loader's own naming rule. */
  private environment(props: KafkaReplicatorProps): Record<string, string> {
    const env: Record<string, string> = {
      [envVariableName("source", "brokers")]: props.source.bootstrapServers,
      [envVariableName("source", "alias")]: props.source.alias,
      [envVariableName("target", "brokers")]: props.target.bootstrapServers,
      [envVariableName("target", "fencing")]: props.target.fencing ?? "transactional",
      [envVariableName("topics", "whitelist")]: props.whitelist,
      [envVariableName("topics", "blacklist")]: props.blacklist ?? "",
      [envVariableName("topics", "rename")]: props.renamePolicy ?? "identity",
      [envVariableName("leases", "table")]: this.leases.table.tableName,
      POWERTOOLS_SERVICE_NAME: this.serviceName,
    };
    for (const [section, cluster] of [
      ["source", props.source],
      ["target", props.target],
    ] as const) {
      env[envVariableName(section, "tls")] = cluster.tls ?? "false";
      env[envVariableName(section, "saslMechanism")] = cluster.saslMechanism ?? "";
      env[envVariableName(section, "secretArn")] = cluster.secretArn ?? "";
    }
    return env;
  }

  private function(
    id: string,
    name: "replicate" | "lag",
    options: {
      timeout: Duration;
      reservedConcurrentExecutions: number;
      environment: Record<string, string>;
      description: string;
      vpc?: VpcPlacementProps;
    },
  ): NodejsFunction {
    const logGroup = new LogGroup(this, `${id}Logs`, {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // A role of our own with no managed policies: logs to its own log group only.
    const role = new Role(this, `${id}Role`, {
      assumedBy: new ServicePrincipal("lambda.amazonaws.com"),
      description: `kafka-mirror ${name} function`,
    });
    role.addToPolicy(
      new PolicyStatement({
        actions: ["logs:CreateLogStream", "logs:PutLogEvents"],
        resources: [`${logGroup.logGroupArn}`],
      }),
    );
    const fn = new NodejsFunction(this, id, {
      entry: join(PROJECT_ROOT, "functions", `${name}.ts`),
      handler: "handler",
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: join(PROJECT_ROOT, "package-lock.json"),
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: 1024,
      timeout: options.timeout,
      reservedConcurrentExecutions: options.reservedConcurrentExecutions,
      environment: options.environment,
      description: options.description,
      role,
      logGroup,
      tracing: Tracing.DISABLED,
      // Scheduled runs are not retried by Lambda: the next tick is the retry.
      retryAttempts: 0,
      maxEventAge: Duration.minutes(1),
      bundling: {
        forceDockerBundling: false,
        format: OutputFormat.ESM,
        target: "node22",
        mainFields: ["module", "main"],
        // The AWS SDK is bundled: the code is tested against the pinned SDK, not Lambda's copy.
        externalModules: [...COPIED_PACKAGES],
        banner:
          "import { createRequire as __kafkaMirrorCreateRequire } from 'node:module'; const require = __kafkaMirrorCreateRequire(import.meta.url);",
        commandHooks: {
          beforeBundling: () => [],
          beforeInstall: () => [],
          afterBundling: (inputDir: string, outputDir: string) => [
            `mkdir -p "${outputDir}/node_modules/@bokuweb"`,
            ...COPIED_PACKAGES.map(
              (pkg) => `cp -R "${inputDir}/node_modules/${pkg}" "${outputDir}/node_modules/${pkg}"`,
            ),
          ],
        },
      },
    });
    if (options.vpc !== undefined) this.placeInVpc(fn, role, options.vpc);
    return fn;
  }

  /** Subnets and security groups by id: no VPC lookup, so synth stays offline. */
  private placeInVpc(fn: NodejsFunction, role: Role, vpc: VpcPlacementProps): void {
    const cfn = fn.node.defaultChild as CfnFunction;
    cfn.vpcConfig = { subnetIds: [...vpc.subnetIds], securityGroupIds: [...vpc.securityGroupIds] };
    const eni = new Policy(this, `${fn.node.id}VpcAccess`, {
      statements: [
        new PolicyStatement({
          // EC2 does not support resource-level permissions for these calls.
          actions: [
            "ec2:CreateNetworkInterface",
            "ec2:DescribeNetworkInterfaces",
            "ec2:DeleteNetworkInterface",
            "ec2:AssignPrivateIpAddresses",
            "ec2:UnassignPrivateIpAddresses",
          ],
          resources: ["*"],
        }),
      ],
    });
    eni.attachToRole(role);
    Validations.of(eni).acknowledge({
      id: "AwsSolutions::AwsSolutions-IAM5[Resource::*]",
      reason:
        "EC2 network-interface calls Lambda needs for VPC placement support no resource-level permissions",
    });
  }

  /** Exactly the calls lib/dynamodb makes, on this table only. */
  private grantLeaseTable(fn: NodejsFunction): void {
    fn.addToRolePolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: [
          "dynamodb:BatchGetItem",
          "dynamodb:GetItem",
          "dynamodb:PutItem",
          "dynamodb:UpdateItem",
          "dynamodb:Scan",
          "dynamodb:DescribeTable",
        ],
        resources: [this.leases.table.tableArn],
      }),
    );
  }

  /** GetSecretValue on the cluster's own secret, only when one is configured. */
  private grantSecret(functions: readonly NodejsFunction[], cluster: ClusterProps, side: string): void {
    if (cluster.secretArn === undefined) return;
    const policy = new Policy(this, `${side}Secret`, {
      statements: [
        new PolicyStatement({ actions: ["secretsmanager:GetSecretValue"], resources: [cluster.secretArn] }),
      ],
    });
    for (const fn of functions) policy.attachToRole(fn.role as Role);
    if (Token.isUnresolved(cluster.secretArn)) {
      onlyIf(
        policy,
        new CfnCondition(this, `${side}SecretSet`, {
          expression: Fn.conditionNot(Fn.conditionEquals(cluster.secretArn, "")),
        }),
      );
    }
  }

  /**
   * MSK IAM access to one cluster and its topics. Topic ARNs share the cluster ARN's name and id
   * (`...:cluster/<name>/<uuid>` → `...:topic/<name>/<uuid>/<topic>`).
   */
  private grantMskIam(
    functions: readonly NodejsFunction[],
    cluster: ClusterProps,
    side: string,
    actions: {
      cluster: string[];
      topics: string[];
      transactionalIds?: { actions: string[]; prefix: string; alias: string };
    },
  ): void {
    const arn = cluster.mskClusterArn;
    if (arn === undefined) return;
    const [prefix, nameAndId] = [
      Fn.select(0, Fn.split(":cluster/", arn)),
      Fn.select(1, Fn.split(":cluster/", arn)),
    ];
    const topics = Fn.join("", [prefix, ":topic/", nameAndId, "/*"]);
    const txn = actions.transactionalIds;
    const transactionalIds =
      txn === undefined
        ? undefined
        : Fn.join("", [prefix, ":transactional-id/", nameAndId, "/", txn.prefix, "*"]);
    const policy = new Policy(this, `${side}MskAccess`, {
      statements: [
        new PolicyStatement({ actions: actions.cluster, resources: [arn] }),
        new PolicyStatement({ actions: actions.topics, resources: [topics] }),
        ...(txn === undefined || transactionalIds === undefined
          ? []
          : [new PolicyStatement({ actions: txn.actions, resources: [transactionalIds] })]),
      ],
    });
    for (const fn of functions) policy.attachToRole(fn.role as Role);
    // cdk-nag names the finding after the resource as CloudFormation will see it.
    const resolved = (token: string) => JSON.stringify(Stack.of(this).resolve(token));
    Validations.of(policy).acknowledge({
      id: `AwsSolutions::AwsSolutions-IAM5[Resource::${resolved(prefix)}:topic/${resolved(nameAndId)}/*]`,
      reason:
        "the topics mirrored follow the Whitelist parameter and change without a deploy, so access covers the cluster's topics (read-only on the source)",
    });
    if (transactionalIds !== undefined) {
      Validations.of(policy).acknowledge({
        // cdk-nag renders a parameter inside the resource as <Name>, a literal alias as itself.
        id: `AwsSolutions::AwsSolutions-IAM5[Resource::${resolved(prefix)}:transactional-id/${resolved(nameAndId)}/kafka-mirror.${Token.isUnresolved(txn?.alias) ? "<SourceAlias>" : txn?.alias}/*]`,
        reason:
          "one transactional.id per target partition, created as topics and partitions appear; the wildcard covers only ids under this source alias's kafka-mirror prefix",
      });
    }
    if (Token.isUnresolved(arn)) {
      onlyIf(
        policy,
        new CfnCondition(this, `${side}MskClusterSet`, {
          expression: Fn.conditionNot(Fn.conditionEquals(arn, "")),
        }),
      );
    }
  }

  /**
   * One EventBridge rule per worker slot, each invoking the function once per tick with its slot
   * number as input. CloudFormation has no "less than", so slot i is on when Workers equals any of
   * i..maxWorkers.
   */
  private workerSchedules(props: KafkaReplicatorProps, expression: string): Rule[] {
    const max = props.maxWorkers ?? 10;
    const count = Token.isUnresolved(props.workers) ? max : props.workers;
    const rules: Rule[] = [];
    for (let slot = 1; slot <= count; slot++) {
      const rule = new Rule(this, `WorkerSchedule${slot}`, {
        description: `kafka-mirror: replicate worker ${slot} of Workers, once per tick`,
        schedule: Schedule.expression(expression),
        targets: [
          new LambdaFunction(this.replicateFunction, {
            event: RuleTargetInput.fromObject({
              source: "kafka-mirror.schedule",
              kind: "replicate",
              worker: slot,
            }),
            // A failed start (throttled, cold-start error) is retried for up to a minute; a retry that
            // overlaps the next tick is harmless, leases give each partition one holder. Older events
            // are dropped: the next tick starts a worker anyway.
            retryAttempts: 2,
            maxEventAge: Duration.minutes(1),
          }),
        ],
      });
      if (Token.isUnresolved(props.workers)) {
        const values: ICfnConditionExpression[] = [];
        for (let n = slot; n <= max; n++)
          values.push(Fn.conditionEquals(Token.asString(props.workers), String(n)));
        const enabled = new CfnCondition(this, `WorkerSlot${slot}Enabled`, {
          expression: values.length === 1 ? (values[0] as ICfnConditionExpression) : orOf(values),
        });
        onlyIf(rule, enabled);
        // The rule's invoke permission (CDK puts it under the rule) must exist only with the rule.
        const permissions = rule.node.findAll().filter((c): c is CfnPermission => c instanceof CfnPermission);
        if (permissions.length !== 1)
          throw new Error(`expected one invoke permission under ${rule.node.path}`);
        for (const permission of permissions) permission.cfnOptions.condition = enabled;
      }
      rules.push(rule);
    }
    return rules;
  }
}

/** Makes the construct's CloudFormation resource exist only under `condition`. */
function onlyIf(construct: IConstruct, condition: CfnCondition): void {
  const resource = construct.node.defaultChild;
  if (!(resource instanceof CfnResource))
    throw new Error(`${construct.node.path} has no CloudFormation resource`);
  resource.cfnOptions.condition = condition;
}

/** Fn::Or takes 2 to 10 conditions; nest for more. */
function orOf(conditions: ICfnConditionExpression[]): ICfnConditionExpression {
  if (conditions.length <= 10) return Fn.conditionOr(...conditions);
  return Fn.conditionOr(...conditions.slice(0, 9), orOf(conditions.slice(9)));
}
