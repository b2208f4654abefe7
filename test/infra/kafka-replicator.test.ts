/** The construct used with plain values rather than CloudFormation parameters. */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { App, Stack } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import { KafkaReplicator } from "../../infra/kafka-replicator.js";

const CDK_CONTEXT = (
  JSON.parse(readFileSync(new URL("../../cdk.json", import.meta.url), "utf8")) as {
    context: Record<string, unknown>;
  }
).context;

describe("KafkaReplicator with plain values", () => {
  it("creates exactly `workers` unconditional schedules and no optional grants", () => {
    // Prepare
    const stack = new Stack(new App({ context: CDK_CONTEXT }), "Plain", { env: { region: "eu-west-1" } });

    // Act
    new KafkaReplicator(stack, "Replicator", {
      source: { bootstrapServers: "s:9092", alias: "idc1" },
      target: { bootstrapServers: "t:9092" },
      whitelist: "ORDERS",
      workers: 2,
      scheduleMinutes: 1,
    });
    const template = Template.fromStack(stack);

    // Assess
    const rules = template.findResources("AWS::Events::Rule", {
      Properties: { Targets: [Match.objectLike({ Input: Match.stringLikeRegexp('"kind":"replicate"') })] },
    });
    assert.equal(Object.keys(rules).length, 2);
    for (const rule of Object.values(rules))
      assert.equal((rule as { Condition?: string }).Condition, undefined);
    assert.deepEqual(template.toJSON().Conditions, undefined);
    template.hasResourceProperties("AWS::Lambda::Function", {
      Description: Match.stringLikeRegexp("copies leased"),
      ReservedConcurrentExecutions: 2,
      Environment: { Variables: Match.objectLike({ KAFKA_MIRROR_TOPICS_WHITELIST: "ORDERS" }) },
    });
    const statements = JSON.stringify(template.findResources("AWS::IAM::Policy"));
    assert.ok(!statements.includes("secretsmanager:"), "no secret configured, no secret access");
    assert.ok(!statements.includes("kafka-cluster:"), "no MSK cluster configured, no MSK access");
  });
});
