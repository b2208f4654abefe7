/**
 * The synthesized template of one region's stack, asserted with Match helpers (never logical
 * IDs), and the whole app synthesized with cdk-nag and the template validator as `cdk synth`
 * runs them.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { App } from "aws-cdk-lib";
import { Annotations, Match, Template } from "aws-cdk-lib/assertions";
import { buildApp, REGIONS_CONTEXT, VPC_CONTEXT } from "../../infra/app.js";
import { KafkaMirrorStack, MAX_WORKERS } from "../../infra/kafka-mirror-stack.js";
import { envVariableName } from "../../lib/config/load.js";
import { MetricName } from "../../lib/observability/metric-names.js";
import { CDK_CONTEXT, withTemplateValidation } from "../helpers/cdk.js";

type Resources = Record<string, { Type: string; Properties: Record<string, unknown>; Condition?: string }>;

function ofType(template: Template, type: string): Resources {
  return template.findResources(type) as Resources;
}

function replicateFunction(template: Template) {
  const functions = Object.values(ofType(template, "AWS::Lambda::Function"));
  const replicate = functions.find((f) => String(f.Properties.Description).includes("copies leased"));
  assert.ok(replicate?.Properties, "replicate function");
  return replicate.Properties;
}

/** The policies naming `side`'s MSK cluster ARN, with or without a consumer-group statement. */
function mskPolicies(
  template: Template,
  side: string,
  groups: boolean,
): ReturnType<Template["findResources"]> {
  const all = template.findResources("AWS::IAM::Policy", {
    Properties: {
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ Resource: { Ref: `${side}MskClusterArn` } })]),
      },
    },
  });
  return Object.fromEntries(
    Object.entries(all).filter(([, p]) => JSON.stringify(p).includes(":group/") === groups),
  );
}

/** The replication's own MSK policies (not the group offset sync's). */
function mirrorPolicies(template: Template, side: string): ReturnType<Template["findResources"]> {
  return mskPolicies(template, side, false);
}

describe("KafkaMirrorStack template", () => {
  let template: Template;

  before(() => {
    const app = new App({ context: CDK_CONTEXT });
    template = Template.fromStack(new KafkaMirrorStack(app, "Test", { env: { region: "eu-west-1" } }));
  });

  it("has no default SourceAlias, so two regional stacks cannot share one provenance by accident", () => {
    const parameters = template.toJSON().Parameters as Record<string, Record<string, unknown>>;
    const alias = parameters.SourceAlias;
    assert.ok(alias !== undefined, "SourceAlias is a parameter");
    assert.equal(
      "Default" in alias,
      false,
      `SourceAlias must be required, has Default ${String(alias.Default)}`,
    );
  });

  it("exposes every operational setting as a parameter", () => {
    for (const name of [
      "Whitelist",
      "SourceBootstrapServers",
      "TargetBootstrapServers",
      "SourceSecretArn",
      "TargetSecretArn",
    ]) {
      template.hasParameter(name, { Type: "String" });
    }
    template.hasParameter("Blacklist", { Type: "String", Default: "" });
    template.hasParameter("GroupWhitelist", { Type: "String", Default: "" });
    template.hasParameter("GroupBlacklist", { Type: "String", Default: "" });
    template.hasParameter("SourceAlias", {
      Type: "String",
      AllowedPattern: "^[a-zA-Z0-9._-]{1,100}$",
      ConstraintDescription: Match.stringLikeRegexp("required: .*unique among the sources"),
    });
    template.hasParameter("RenamePolicy", { AllowedValues: ["identity", "prefix"], Default: "identity" });
    template.hasParameter("TargetFencing", {
      AllowedValues: ["transactional", "none"],
      Default: "transactional",
    });
    template.hasParameter("TargetCopy", { AllowedValues: ["records", "batches"], Default: "records" });
    template.hasParameter("Workers", {
      Type: "Number",
      Default: 3,
      AllowedValues: Array.from({ length: MAX_WORKERS }, (_, i) => String(i + 1)),
    });
    template.hasParameter("ScheduleRate", { Type: "Number", Default: 5 });
    template.hasParameter("LagRecordsThreshold", { Type: "Number" });
    template.hasParameter("LagSecondsThreshold", { Type: "Number" });
    template.hasParameter("AlarmEmail", { Type: "String", Default: "" });
    template.hasParameter("SourceSaslMechanism", {
      AllowedValues: ["none", "plain", "scram-sha-256", "scram-sha-512", "aws-msk-iam"],
    });
  });

  it("wires the parameters into the functions' config variables, the whitelist included", () => {
    for (const description of ["copies leased", "publishes replication lag"]) {
      template.hasResourceProperties("AWS::Lambda::Function", {
        Description: Match.stringLikeRegexp(description),
        Environment: {
          Variables: Match.objectLike({
            [envVariableName("topics", "whitelist")]: { Ref: "Whitelist" },
            [envVariableName("topics", "blacklist")]: { Ref: "Blacklist" },
            [envVariableName("topics", "rename")]: { Ref: "RenamePolicy" },
            [envVariableName("groups", "whitelist")]: { Ref: "GroupWhitelist" },
            [envVariableName("groups", "blacklist")]: { Ref: "GroupBlacklist" },
            [envVariableName("source", "brokers")]: { Ref: "SourceBootstrapServers" },
            [envVariableName("target", "brokers")]: { Ref: "TargetBootstrapServers" },
            [envVariableName("target", "fencing")]: { Ref: "TargetFencing" },
            [envVariableName("target", "copy")]: { Ref: "TargetCopy" },
            [envVariableName("source", "alias")]: { Ref: "SourceAlias" },
            [envVariableName("source", "secretArn")]: { Ref: "SourceSecretArn" },
            [envVariableName("target", "saslMechanism")]: { Ref: "TargetSaslMechanism" },
            [envVariableName("leases", "table")]: { Ref: Match.anyValue() },
          }),
        },
      });
    }
  });

  it("runs Node 22 on arm64, times out with the tick plus the overlap and reserves 2 x Workers concurrency", () => {
    const fn = replicateFunction(template);
    assert.equal(fn.Runtime, "nodejs22.x");
    assert.deepEqual(fn.Architectures, ["arm64"]);
    const mappings = template.toJSON().Mappings as Record<string, Record<string, Record<string, unknown>>>;
    // Two runs per slot while one hands over to the next.
    const reserved = fn.ReservedConcurrentExecutions as { "Fn::FindInMap": [string, unknown, string] };
    assert.deepEqual(reserved["Fn::FindInMap"].slice(1), [{ Ref: "Workers" }, "reserved"]);
    const fleet = mappings[reserved["Fn::FindInMap"][0]];
    assert.deepEqual(fleet?.["1"], { reserved: 2 });
    assert.deepEqual(fleet?.[String(MAX_WORKERS)], { reserved: 2 * MAX_WORKERS });
    const timeout = fn.Timeout as { "Fn::FindInMap": [string, unknown, string] };
    assert.deepEqual(timeout["Fn::FindInMap"].slice(1), [{ Ref: "ScheduleRate" }, "timeoutSeconds"]);
    // The tick mapping: the timeout is the tick plus the overlap (80 s), so runs of a slot
    // overlap and hand over; 14 and 15 minutes do not fit in Lambda's 900 s.
    const ticks = mappings[timeout["Fn::FindInMap"][0]];
    assert.deepEqual(ticks?.["1"], { expression: "rate(1 minute)", timeoutSeconds: 140, tickSeconds: 60 });
    assert.deepEqual(ticks?.["5"], { expression: "rate(5 minutes)", timeoutSeconds: 380, tickSeconds: 300 });
    assert.deepEqual(ticks?.["13"], {
      expression: "rate(13 minutes)",
      timeoutSeconds: 860,
      tickSeconds: 780,
    });
    assert.equal(ticks?.["14"], undefined);
    const variables = (fn.Environment as { Variables: Record<string, unknown> }).Variables;
    const tick = variables.KAFKA_MIRROR_TICK_SECONDS as { "Fn::FindInMap": unknown[] };
    assert.deepEqual(tick["Fn::FindInMap"].slice(1), [{ Ref: "ScheduleRate" }, "tickSeconds"]);
  });

  it("keeps the lease table on demand, recoverable, encrypted and retained", () => {
    template.hasResource("AWS::DynamoDB::GlobalTable", {
      DeletionPolicy: "Retain",
      Properties: Match.objectLike({
        BillingMode: "PAY_PER_REQUEST",
        SSESpecification: Match.objectLike({ SSEEnabled: true }),
        Replicas: [
          Match.objectLike({ PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } }),
        ],
      }),
    });
  });

  it("starts one replicate invocation per worker slot, switched on by Workers", () => {
    const rules = Object.values(ofType(template, "AWS::Events::Rule")).filter((r) =>
      JSON.stringify(r.Properties.Targets).includes('\\"kind\\":\\"replicate\\"'),
    );
    assert.equal(rules.length, MAX_WORKERS);
    const conditions = template.toJSON().Conditions as Record<string, unknown>;
    const slots = rules.map((rule) => {
      const targets = rule.Properties.Targets as { Input: string; RetryPolicy: unknown }[];
      assert.equal(targets.length, 1);
      const target = targets[0];
      assert.ok(target);
      assert.deepEqual(target.RetryPolicy, { MaximumEventAgeInSeconds: 60, MaximumRetryAttempts: 2 });
      const input = JSON.parse(target.Input) as { worker: number };
      assert.deepEqual(
        (rule.Properties.ScheduleExpression as { "Fn::FindInMap": unknown[] })["Fn::FindInMap"].slice(1),
        [{ Ref: "ScheduleRate" }, "expression"],
      );
      assert.ok(rule.Condition, `slot ${input.worker} has no condition`);
      return { slot: input.worker, enabledFor: workersEnabling(conditions, rule.Condition) };
    });
    slots.sort((a, b) => a.slot - b.slot);
    for (const { slot, enabledFor } of slots) {
      // Slot i runs whenever Workers >= i.
      assert.deepEqual(
        enabledFor.sort((a, b) => a - b),
        Array.from({ length: MAX_WORKERS - slot + 1 }, (_, i) => slot + i),
        `slot ${slot}`,
      );
    }
    // Each slot's invoke permission exists exactly when its rule does.
    const permissions = Object.values(ofType(template, "AWS::Lambda::Permission"));
    const conditional = permissions.filter((p) => p.Condition !== undefined).map((p) => p.Condition);
    assert.deepEqual(new Set(conditional), new Set(rules.map((r) => r.Condition)));
  });

  it("measures lag every minute", () => {
    template.hasResourceProperties("AWS::Events::Rule", {
      ScheduleExpression: "rate(1 minute)",
      Targets: [Match.objectLike({ Input: Match.stringLikeRegexp('"kind":"lag"') })],
    });
  });

  it("alarms on lag, stalls, loss, errors and throttles with the intended thresholds and missing-data policy", () => {
    const metricAlarm = (metric: string, threshold: unknown, missing: string) =>
      template.hasResourceProperties("AWS::CloudWatch::Alarm", {
        Namespace: "KafkaMirror",
        MetricName: metric,
        Dimensions: [{ Name: "service", Value: Match.anyValue() }],
        ComparisonOperator: "GreaterThanThreshold",
        Threshold: threshold,
        TreatMissingData: missing,
        AlarmActions: [{ Ref: Match.anyValue() }],
      });
    metricAlarm(MetricName.MaxLagRecords, { Ref: "LagRecordsThreshold" }, "breaching");
    metricAlarm(MetricName.MaxLagSeconds, { Ref: "LagSecondsThreshold" }, "breaching");
    metricAlarm(MetricName.StalledPartitions, 0, "breaching");
    metricAlarm(MetricName.TotalLostRecords, 0, "notBreaching");
    metricAlarm(MetricName.TotalErrors, 0, "notBreaching");
    // A failing or silent group offset sync (stale) alarms.
    metricAlarm(MetricName.GroupSyncErrors, 0, "breaching");
    for (const metric of ["Errors", "Throttles"]) {
      const alarms = template.findResources("AWS::CloudWatch::Alarm", {
        Properties: { Namespace: "AWS/Lambda", MetricName: metric, Threshold: 0 },
      });
      assert.equal(Object.keys(alarms).length, 2, `${metric} alarms for both functions`);
    }
    template.hasResourceProperties("AWS::SNS::Topic", { KmsMasterKeyId: Match.anyValue() });
    template.hasResource("AWS::SNS::Subscription", {
      Properties: { Protocol: "email", Endpoint: { Ref: "AlarmEmail" } },
      Condition: Match.anyValue(),
    });
    template.resourceCountIs("AWS::CloudWatch::Dashboard", 1);
  });

  it("alarms when partitions keep failing, in 2 of 15 minutes, saying what to look at and what to change", () => {
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      Namespace: "KafkaMirror",
      MetricName: MetricName.PartitionsFailed,
      Dimensions: [{ Name: "service", Value: Match.anyValue() }],
      Statistic: "Sum",
      Period: 60,
      ComparisonOperator: "GreaterThanThreshold",
      Threshold: 0,
      EvaluationPeriods: 15,
      DatapointsToAlarm: 2,
      TreatMissingData: "notBreaching",
      AlarmActions: [{ Ref: Match.anyValue() }],
      OKActions: [{ Ref: Match.anyValue() }],
      // The description names the source alias (a parameter), so it is a join of its parts.
      AlarmDescription: {
        "Fn::Join": [
          "",
          Match.arrayWith([
            Match.stringLikeRegexp("ErrorCode.*max\\.message\\.bytes.*transaction\\.max\\.timeout\\.ms"),
          ]),
        ],
      },
    });
  });

  it("grants least privilege: the lease table's item calls, the configured secrets only", () => {
    const statements = Object.values(ofType(template, "AWS::IAM::Policy")).flatMap(
      (p) =>
        (
          p.Properties.PolicyDocument as {
            Statement: { Action: string | string[]; Resource: unknown }[];
          }
        ).Statement,
    );
    for (const statement of statements) {
      const actions = [statement.Action].flat();
      assert.ok(!actions.some((a) => a.endsWith("*")), `wildcard action in ${JSON.stringify(statement)}`);
      assert.notEqual(statement.Resource, "*", `wildcard resource in ${JSON.stringify(statement)}`);
    }
    const dynamo = statements.filter((s) => [s.Action].flat().some((a) => a.startsWith("dynamodb:")));
    assert.equal(dynamo.length, 2, "one table statement per function");
    for (const s of dynamo) {
      assert.deepEqual([s.Action].flat().sort(), [
        "dynamodb:BatchGetItem",
        "dynamodb:DeleteItem",
        "dynamodb:DescribeTable",
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:Scan",
        "dynamodb:UpdateItem",
      ]);
      assert.match(JSON.stringify(s.Resource), /^\{"Fn::GetAtt":\["[^"]+","Arn"\]\}$/);
    }
    for (const side of ["SourceSecretArn", "TargetSecretArn"]) {
      template.hasResource("AWS::IAM::Policy", {
        Condition: Match.anyValue(),
        Properties: Match.objectLike({
          PolicyDocument: {
            Statement: [
              { Action: "secretsmanager:GetSecretValue", Effect: "Allow", Resource: { Ref: side } },
            ],
            Version: Match.anyValue(),
          },
          Roles: [{ Ref: Match.anyValue() }, { Ref: Match.anyValue() }],
        }),
      });
    }
  });

  it("grants MSK IAM access per side: read on the source for both functions, write on the target for replicate", () => {
    const msk = (side: string) => {
      const policies = Object.values(mirrorPolicies(template, side)) as {
        Condition?: string;
        Properties: { PolicyDocument: { Statement: { Action: string[] }[] }; Roles: unknown[] };
      }[];
      assert.equal(policies.length, 1, side);
      const policy = policies[0];
      assert.ok(policy);
      assert.ok(policy.Condition, `${side} MSK access exists only when the ARN is set`);
      return {
        actions: policy.Properties.PolicyDocument.Statement.flatMap((st) => st.Action).sort(),
        roles: policy.Properties.Roles.length,
      };
    };
    assert.deepEqual(msk("Source"), {
      actions: [
        "kafka-cluster:Connect",
        "kafka-cluster:DescribeCluster",
        "kafka-cluster:DescribeTopic",
        "kafka-cluster:DescribeTopicDynamicConfiguration",
        "kafka-cluster:ReadData",
      ],
      roles: 2,
    });
    assert.deepEqual(msk("Target"), {
      actions: [
        "kafka-cluster:AlterTopic",
        "kafka-cluster:AlterTopicDynamicConfiguration",
        "kafka-cluster:AlterTransactionalId",
        "kafka-cluster:Connect",
        "kafka-cluster:CreateTopic",
        "kafka-cluster:DescribeCluster",
        "kafka-cluster:DescribeTopic",
        "kafka-cluster:DescribeTopicDynamicConfiguration",
        "kafka-cluster:DescribeTransactionalId",
        "kafka-cluster:ReadData",
        "kafka-cluster:WriteData",
        "kafka-cluster:WriteDataIdempotently",
      ],
      roles: 1,
    });
  });

  it("grants the lag function's group offset sync DescribeGroup on the source and DescribeGroup, AlterGroup and ReadData on the target", () => {
    const actionsOf = (side: string) => {
      const policies = Object.values(mskPolicies(template, side, true)) as {
        Condition?: string;
        Properties: {
          PolicyDocument: { Statement: { Action: string[]; Resource: unknown }[] };
          Roles: unknown[];
        };
      }[];
      assert.equal(policies.length, 1, side);
      const [policy] = policies;
      assert.ok(policy?.Condition, `${side} group access exists only when the ARN is set`);
      assert.equal(policy?.Properties.Roles.length, 1, "the lag function only");
      const statements = policy?.Properties.PolicyDocument.Statement ?? [];
      const onGroups = statements.filter((st) => JSON.stringify(st.Resource).includes(":group/"));
      return {
        all: statements.flatMap((st) => st.Action).sort(),
        groups: onGroups.flatMap((st) => st.Action).sort(),
      };
    };
    assert.deepEqual(actionsOf("Source").groups, ["kafka-cluster:DescribeGroup"]);
    const target = actionsOf("Target");
    assert.deepEqual(target.groups, ["kafka-cluster:AlterGroup", "kafka-cluster:DescribeGroup"]);
    assert.ok(
      target.all.includes("kafka-cluster:ReadData") && !target.all.includes("kafka-cluster:WriteData"),
    );
  });

  it("lets replicate use only its own transactional ids on the target: kafka-mirror.<SourceAlias>/*", () => {
    const statements = Object.values(mirrorPolicies(template, "Target")).flatMap(
      (p) =>
        (p as { Properties: { PolicyDocument: { Statement: { Action: string[]; Resource: unknown }[] } } })
          .Properties.PolicyDocument.Statement,
    );
    const onIds = statements.filter((st) => JSON.stringify(st.Resource).includes(":transactional-id/"));
    assert.equal(onIds.length, 1);
    const resource = JSON.stringify(onIds[0]?.Resource);
    assert.match(
      resource,
      /":transactional-id\/",.*"\/kafka-mirror\.",\{"Ref":"SourceAlias"\},"\/\*"\]\]\}$/,
    );
    assert.deepEqual([...(onIds[0]?.Action ?? [])].sort(), [
      "kafka-cluster:AlterTransactionalId",
      "kafka-cluster:DescribeTransactionalId",
    ]);
  });

  it("lets replicate read the target topics it writes, as exactly-once reads their tail (regression)", () => {
    const [policy, ...others] = Object.values(mirrorPolicies(template, "Target")) as {
      Properties: { PolicyDocument: { Statement: { Action: string[]; Resource: unknown }[] } };
    }[];
    assert.equal(others.length, 0);
    const statements = policy?.Properties.PolicyDocument.Statement ?? [];
    const onTopics = statements.filter((st) => JSON.stringify(st.Resource).includes(":topic/"));
    assert.equal(onTopics.length, 1, "one statement on the target's topics");
    // Scoped like WriteData: the cluster's topics only, never "*" or another cluster's.
    assert.ok(onTopics[0]?.Action.includes("kafka-cluster:ReadData"));
    assert.ok(onTopics[0]?.Action.includes("kafka-cluster:DescribeTopic"));
    const onCluster = statements.filter((st) => !JSON.stringify(st.Resource).includes(":topic/"));
    assert.ok(onCluster.every((st) => !st.Action.includes("kafka-cluster:ReadData")));
  });

  it("narrows the target topics to <SourceAlias>.* with RenamePolicy=prefix, the source keeps every topic", () => {
    const policyOf = (side: string) =>
      Object.values(mirrorPolicies(template, side)).flatMap(
        (p) =>
          (p as { Properties: { PolicyDocument: { Statement: { Resource: unknown }[] } } }).Properties
            .PolicyDocument.Statement,
      );
    const topicResource = (side: string) => {
      const onTopics = policyOf(side).filter((st) => JSON.stringify(st.Resource).includes(":topic/"));
      assert.equal(onTopics.length, 1, `${side}: one statement on topics`);
      const resource = onTopics[0]?.Resource as { "Fn::Join": [string, unknown[]] } | undefined;
      return resource?.["Fn::Join"][1].slice(3);
    };
    // Source: `<cluster name>/<uuid>/*`, whatever the rename policy (the Whitelist decides).
    assert.deepEqual(topicResource("Source"), ["/*"]);
    // Target: `/<SourceAlias>.*` when prefixed, `/*` when topics keep their source names.
    const [slash, choice, star] = topicResource("Target") as [
      string,
      { "Fn::If": [string, unknown, unknown] },
      string,
    ];
    assert.deepEqual([slash, star], ["/", "*"]);
    const [condition, prefixed, identity] = choice["Fn::If"];
    assert.deepEqual(prefixed, { "Fn::Join": ["", [{ Ref: "SourceAlias" }, "."]] });
    assert.equal(identity, "");
    const conditions = template.toJSON().Conditions as Record<string, unknown>;
    assert.deepEqual(conditions[condition], { "Fn::Equals": [{ Ref: "RenamePolicy" }, "prefix"] });
  });

  it("checks Workers and ScheduleRate against the schedules at deploy time with a template rule", () => {
    const rules = Object.values(
      template.toJSON().Rules as Record<string, { Assertions: { Assert: unknown }[] }>,
    );
    // CDK's own rule checks the bootstrap version; ours are the ones on the parameters.
    const asserts = rules
      .flatMap((r) => r.Assertions.map((a) => a.Assert))
      .filter((a) => /"Ref":"(Workers|ScheduleRate)"/.test(JSON.stringify(a)));
    assert.deepEqual(asserts, [
      { "Fn::Contains": [Array.from({ length: MAX_WORKERS }, (_, i) => String(i + 1)), { Ref: "Workers" }] },
      { "Fn::Contains": [Array.from({ length: 13 }, (_, i) => String(i + 1)), { Ref: "ScheduleRate" }] },
    ]);
  });

  it("places the functions in the given subnets when a VPC is configured", () => {
    const app = new App({ context: CDK_CONTEXT });
    const inVpc = Template.fromStack(
      new KafkaMirrorStack(app, "InVpc", {
        env: { region: "eu-west-1" },
        vpc: {
          subnetIds: ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"],
          securityGroupIds: ["sg-0123456789abcdef0"],
        },
      }),
    );
    const functions = Object.values(ofType(inVpc, "AWS::Lambda::Function"));
    assert.equal(functions.length, 2);
    for (const fn of functions) {
      assert.deepEqual(fn.Properties.VpcConfig, {
        SubnetIds: ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"],
        SecurityGroupIds: ["sg-0123456789abcdef0"],
      });
    }
    inVpc.hasResourceProperties("AWS::IAM::Policy", {
      PolicyDocument: {
        Statement: [Match.objectLike({ Action: Match.arrayWith(["ec2:CreateNetworkInterface"]) })],
      },
    });
  });

  it("gives each VPC function what AWSLambdaVPCAccessExecutionRole gives, and creates the function after that policy", () => {
    const app = new App({ context: CDK_CONTEXT });
    const inVpc = Template.fromStack(
      new KafkaMirrorStack(app, "InVpc", {
        env: { region: "eu-west-1" },
        vpc: { subnetIds: ["subnet-0123456789abcdef0"], securityGroupIds: ["sg-0123456789abcdef0"] },
      }),
    );
    // The managed policy's v3 document (AWS managed policy reference); its logs actions are
    // covered by each role's statement on its own log group.
    const managedEc2 = [
      "ec2:AssignPrivateIpAddresses",
      "ec2:CreateNetworkInterface",
      "ec2:DeleteNetworkInterface",
      "ec2:DescribeNetworkInterfaces",
      "ec2:DescribeSubnets",
      "ec2:UnassignPrivateIpAddresses",
    ];
    const eniPolicies = Object.entries(ofType(inVpc, "AWS::IAM::Policy")).filter(([, p]) =>
      JSON.stringify(p.Properties.PolicyDocument).includes("ec2:"),
    );
    assert.equal(eniPolicies.length, 2, "one network-interface policy per function");
    const functions = ofType(inVpc, "AWS::Lambda::Function");
    for (const [policyId, policy] of eniPolicies) {
      const statements = (policy.Properties.PolicyDocument as { Statement: { Action: string[] }[] })
        .Statement;
      assert.deepEqual(statements.flatMap((st) => st.Action).sort(), managedEc2);
      // The policy's role is the one function's role, and that function waits for the policy.
      const roles = policy.Properties.Roles as { Ref: string }[];
      assert.equal(roles.length, 1);
      const owners = Object.values(functions).filter(
        (f) => JSON.stringify(f.Properties.Role) === JSON.stringify({ "Fn::GetAtt": [roles[0]?.Ref, "Arn"] }),
      );
      assert.equal(owners.length, 1, `one function uses ${policyId}'s role`);
      const dependsOn = (owners[0] as { DependsOn?: string[] }).DependsOn ?? [];
      assert.ok(dependsOn.includes(policyId), `the function must depend on ${policyId}, has ${dependsOn}`);
    }
  });
});

describe("the CDK app", () => {
  let outdir: string;
  before(() => {
    outdir = mkdtempSync(join(tmpdir(), "kafka-mirror-cdk-"));
  });
  after(() => rmSync(outdir, { recursive: true, force: true }));

  it("synthesizes one stack per region with cdk-nag and the template validator clean", () => {
    // Prepare
    const app = new App({
      outdir,
      context: {
        ...CDK_CONTEXT,
        [REGIONS_CONTEXT]: "eu-west-1,us-east-1,ap-southeast-1",
        // One region with private clusters, so the VPC permissions go through cdk-nag too.
        [VPC_CONTEXT]: {
          "us-east-1": {
            subnetIds: ["subnet-0123456789abcdef0"],
            securityGroupIds: ["sg-0123456789abcdef0"],
          },
        },
      },
    });

    // Act
    const stacks = buildApp(app, {});
    withTemplateValidation(() => app.synth());

    // Assess
    assert.deepEqual(
      stacks.map((s) => [s.stackName, s.region]),
      [
        ["KafkaMirror-eu-west-1", "eu-west-1"],
        ["KafkaMirror-us-east-1", "us-east-1"],
        ["KafkaMirror-ap-southeast-1", "ap-southeast-1"],
      ],
    );
    const report = JSON.parse(readFileSync(join(outdir, "validation-report.json"), "utf8")) as {
      pluginReports: { pluginName: string; conclusion: string; violations: unknown[] }[];
    };
    assert.deepEqual(
      report.pluginReports.map((p) => [p.pluginName, p.conclusion, p.violations.length]),
      [
        ["AwsSolutions", "success", 0],
        ["CloudFormation Validate", "success", 0],
      ],
    );
    const privateFunctions = Object.values(
      Template.fromStack(stacks[1] as KafkaMirrorStack).findResources("AWS::Lambda::Function"),
    ).filter((f) => (f as { Properties: { VpcConfig?: unknown } }).Properties.VpcConfig !== undefined);
    assert.equal(privateFunctions.length, 2);
    // `cdk synth --strict` fails on warnings: there must be none left unacknowledged.
    for (const stack of stacks) {
      assert.deepEqual(Annotations.fromStack(stack).findWarning("*", Match.anyValue()), []);
      assert.deepEqual(Annotations.fromStack(stack).findError("*", Match.anyValue()), []);
    }
  });

  it("refuses to synthesize without regions in the context or a default region", () => {
    const app = new App({ outdir, context: { [REGIONS_CONTEXT]: "" } });
    assert.throws(() => buildApp(app, {}), /no regions/);
  });
});

/**
 * The Workers values that switch a condition on, following the chain of conditions it names
 * (slot i: Workers = i, or slot i+1's condition).
 */
function workersEnabling(conditions: Record<string, unknown>, name: string): number[] {
  const values: number[] = [];
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    if (typeof node !== "object" || node === null) return;
    const record = node as Record<string, unknown>;
    const equals = record["Fn::Equals"];
    if (Array.isArray(equals) && JSON.stringify(equals[0]) === '{"Ref":"Workers"}')
      values.push(Number(equals[1]));
    if (typeof record.Condition === "string") visit(conditions[record.Condition]);
    for (const [key, value] of Object.entries(record)) if (key !== "Condition") visit(value);
  };
  visit(conditions[name]);
  return values;
}
