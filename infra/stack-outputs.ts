/**
 * What an operator needs from a deployed stack, as CloudFormation Outputs: where it runs, the
 * names CloudFormation generated (lease table, functions), the dashboard and alarm topic, and a
 * ready CLI config (cli-config.ts) so `kafka-mirror status`, `offsets` and `failover` run against
 * the stack's own lease table and clusters (README "Operations").
 */
import { CfnOutput, type Stack } from "aws-cdk-lib";
import { Construct } from "constructs";
import { cliConfigYaml } from "./cli-config.js";
import type { KafkaReplicator } from "./kafka-replicator.js";
import type { ReplicatorAlarms } from "./replicator-alarms.js";

/** The Output holding the CLI config, by the key `aws cloudformation describe-stacks` filters on. */
export const CLI_CONFIG_OUTPUT = "CliConfig";

/** The shell lines that save the CLI config of `stack` and run `status` with it. */
export function cliUsage(stack: Stack): string {
  const file = `${stack.stackName}.yaml`;
  return [
    `aws cloudformation describe-stacks --region ${stack.region} --stack-name ${stack.stackName} --query "Stacks[0].Outputs[?OutputKey=='${CLI_CONFIG_OUTPUT}'].OutputValue" --output text > ${file}`,
    `AWS_REGION=${stack.region} npx kafka-mirror status --config ${file} --lease-store dynamodb`,
  ].join(" && ");
}

export function addOperatorOutputs(
  stack: Stack,
  replicator: KafkaReplicator,
  alarms: ReplicatorAlarms,
): void {
  // A scope of their own (parameters already use names such as SourceAlias); `key` keeps the
  // short name as the Output's key.
  const scope = new Construct(stack, "Operator");
  const output = (key: string, value: string, description: string) =>
    new CfnOutput(scope, key, { key, value, description });
  output(
    "Region",
    stack.region,
    "Region of this stack's functions, lease table and alarms (AWS_REGION for the CLI)",
  );
  output("SourceAlias", replicator.config.source.alias, "Alias of the source cluster this stack mirrors");
  output(
    "LeaseTableName",
    replicator.leases.table.tableName,
    "DynamoDB table of leases and checkpoints (the CLI's leases.table, with --lease-store dynamodb)",
  );
  output(
    "ReplicateFunctionName",
    replicator.replicateFunction.functionName,
    "The replicate function (copies)",
  );
  output(
    "LagFunctionName",
    replicator.lagFunction.functionName,
    "The lag function (lag, discovery, group offset sync)",
  );
  output(
    "ReplicateLogGroupName",
    replicator.replicateFunction.logGroup.logGroupName,
    "Logs of the replicate function",
  );
  output("LagLogGroupName", replicator.lagFunction.logGroup.logGroupName, "Logs of the lag function");
  output(
    "DashboardName",
    alarms.dashboard.dashboardName,
    "CloudWatch dashboard of lag, copy rate, group sync and alarms",
  );
  output("DashboardUrl", alarms.dashboardUrl, "The dashboard in the CloudWatch console");
  output("AlarmTopicArn", alarms.topic.topicArn, "SNS topic every alarm notifies (subscribe on-call here)");
  output(
    CLI_CONFIG_OUTPUT,
    cliConfigYaml(replicator, replicator.config),
    "kafka-mirror CLI config (YAML) of this stack's functions: save it to a file and run status, offsets or failover with --lease-store dynamodb and AWS_REGION set (see CliUsage)",
  );
  output("CliUsage", cliUsage(stack), "Saves CliConfig to a file and runs kafka-mirror status with it");
}
