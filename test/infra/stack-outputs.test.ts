/**
 * The stack's Outputs, and the CLI config one of them holds: evaluated for given parameter
 * values as CloudFormation would, it is a config file the CLI loads, equal to the config the
 * functions load from their environment.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { App } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { NON_CONFIG_VARIABLES } from "../../functions/runtime.js";
import { KafkaMirrorStack } from "../../infra/kafka-mirror-stack.js";
import { loadConfigFile } from "../../lib/cli/config-file.js";
import { loadConfigFromEnv } from "../../lib/config/load.js";
import { NO_BUNDLING } from "../helpers/cdk.js";
import { type CfnTemplate, type Deployment, evaluate } from "../helpers/cfn-evaluate.js";

const REGION = "eu-west-1";
const SECRET = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:kafka-mirror/idc1-AbCdEf";
const REQUIRED = {
  SourceBootstrapServers: "b-1.idc1.example:9096,b-2.idc1.example:9096",
  TargetBootstrapServers: "b-1.central.example:9098",
  SourceAlias: "idc1",
  // A backslash and a quote: single-quoted YAML must keep the one and double the other.
  Whitelist: "BIN-\\d+|it's",
};

type Outputs = Record<string, { Value: unknown; Description?: string }>;

describe("stack outputs", () => {
  let template: CfnTemplate & {
    Outputs: Outputs;
    Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
  };
  let dir: string;

  before(() => {
    const app = new App({ context: NO_BUNDLING });
    const stack = new KafkaMirrorStack(app, "KafkaMirror-eu-west-1", { env: { region: REGION } });
    template = Template.fromStack(stack, { skipCyclicalDependenciesCheck: true }).toJSON() as typeof template;
    dir = mkdtempSync(join(tmpdir(), "kafka-mirror-outputs-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const deployed = (parameters: Record<string, string>): Deployment => ({
    template,
    parameters: { ...REQUIRED, ...parameters },
    region: REGION,
  });
  const output = (key: string, at: Deployment) => evaluate(template.Outputs[key]?.Value, at);

  it("names the region, the alias, the lease table, the functions and their logs, the dashboard and the alarm topic", () => {
    const at = deployed({});
    const resourceOf = (type: string) =>
      Object.entries(template.Resources)
        .filter(([, r]) => r.Type === type)
        .map(([id]) => `${id}-physical`);

    assert.deepEqual(Object.keys(template.Outputs).sort(), [
      "AlarmTopicArn",
      "CliConfig",
      "CliUsage",
      "DashboardName",
      "DashboardUrl",
      "LagFunctionName",
      "LagLogGroupName",
      "LeaseTableName",
      "Region",
      "ReplicateFunctionName",
      "ReplicateLogGroupName",
      "SourceAlias",
    ]);
    assert.equal(output("Region", at), REGION);
    assert.equal(output("SourceAlias", at), "idc1");
    assert.deepEqual([output("LeaseTableName", at)], resourceOf("AWS::DynamoDB::GlobalTable"));
    assert.deepEqual(
      [output("ReplicateFunctionName", at), output("LagFunctionName", at)].sort(),
      resourceOf("AWS::Lambda::Function").sort(),
    );
    assert.deepEqual(
      [output("ReplicateLogGroupName", at), output("LagLogGroupName", at)].sort(),
      resourceOf("AWS::Logs::LogGroup").sort(),
    );
    assert.deepEqual([output("DashboardName", at)], resourceOf("AWS::CloudWatch::Dashboard"));
    const [dashboard] = Object.values(template.Resources).filter(
      (r) => r.Type === "AWS::CloudWatch::Dashboard",
    );
    assert.equal(
      output("DashboardUrl", at),
      `https://eu-west-1.console.aws.amazon.com/cloudwatch/home?region=eu-west-1#dashboards/dashboard/${String(dashboard?.Properties.DashboardName)}`,
    );
    assert.deepEqual([output("AlarmTopicArn", at)], resourceOf("AWS::SNS::Topic"));
    for (const [key, o] of Object.entries(template.Outputs))
      assert.ok(o.Description, `${key} has a description`);
  });

  for (const [name, parameters] of [
    [
      "a source secret, no target secret",
      {
        SourceTls: "true",
        SourceSaslMechanism: "scram-sha-512",
        SourceSecretArn: SECRET,
        GroupWhitelist: "billing-.*",
      },
    ],
    [
      "no source secret, a target secret, prefix renaming",
      { TargetTls: "true", TargetSaslMechanism: "plain", TargetSecretArn: SECRET, RenamePolicy: "prefix" },
    ],
  ] as const) {
    it(`holds a CLI config equal to the functions' own (${name})`, async () => {
      // Prepare
      const at = deployed(parameters);
      const file = join(dir, `${name.replaceAll(/\W+/g, "-")}.yaml`);
      writeFileSync(file, String(output("CliConfig", at)));
      const lag = Object.values(template.Resources).find(
        (r) =>
          r.Type === "AWS::Lambda::Function" &&
          String(r.Properties.Description).includes("publishes replication lag"),
      );
      assert.ok(lag, "the lag function");
      const { Variables } = lag.Properties.Environment as { Variables: unknown };
      const env = evaluate(Variables, at) as Record<string, string>;

      // Act
      const cli = await loadConfigFile(file);
      const functions = loadConfigFromEnv(env, { otherVariables: NON_CONFIG_VARIABLES });

      // Assess
      // JSON drops the keys an empty value leaves undefined (`blacklist: ''` is none, as an empty
      // variable is).
      assert.deepEqual(JSON.parse(JSON.stringify(cli)), JSON.parse(JSON.stringify(functions)));
      assert.equal(cli.topics.whitelist, "BIN-\\d+|it's");
      assert.equal(cli.leases.table, output("LeaseTableName", at));
      assert.doesNotMatch(
        String(output("CliConfig", at)),
        /\n/,
        "one line, as describe-stacks --output text prints it",
      );
    });
  }

  it("shows how to save the config and run status against the stack", () => {
    assert.equal(
      output("CliUsage", deployed({})),
      `aws cloudformation describe-stacks --region eu-west-1 --stack-name KafkaMirror-eu-west-1 --query "Stacks[0].Outputs[?OutputKey=='CliConfig'].OutputValue" --output text > KafkaMirror-eu-west-1.yaml && AWS_REGION=eu-west-1 npx kafka-mirror status --config KafkaMirror-eu-west-1.yaml --lease-store dynamodb`,
    );
  });
});
