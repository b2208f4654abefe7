/** The construct used with plain values rather than CloudFormation parameters. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { App, CfnParameter, Stack } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import { KafkaReplicator } from "../../infra/kafka-replicator.js";
import { deployTimeChoice, type KafkaReplicatorProps } from "../../infra/replicator-props.js";
import { isReplicatorError } from "../../lib/errors.js";
import { CDK_CONTEXT } from "../helpers/cdk.js";

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
      ReservedConcurrentExecutions: 4,
      Environment: { Variables: Match.objectLike({ KAFKA_MIRROR_TOPICS_WHITELIST: "ORDERS" }) },
    });
    const statements = JSON.stringify(template.findResources("AWS::IAM::Policy"));
    assert.ok(!statements.includes("secretsmanager:"), "no secret configured, no secret access");
    assert.ok(!statements.includes("kafka-cluster:"), "no MSK cluster configured, no MSK access");
  });

  it("refuses workers above maxWorkers and every other bad value at synth time, in one error", () => {
    // Prepare
    const stack = new Stack(new App({ context: CDK_CONTEXT }), "Bad", { env: { region: "eu-west-1" } });

    // Act and assess
    assert.throws(
      () =>
        new KafkaReplicator(stack, "Replicator", {
          source: {
            bootstrapServers: "s:9092",
            alias: "bad alias",
            saslMechanism: "aws-msk-iam",
          },
          // A JavaScript caller is not held to the types: a string is not a boolean.
          target: { bootstrapServers: "t", tls: "true" as unknown as boolean },
          whitelist: "ORDERS",
          workers: 12,
          maxWorkers: 10,
          scheduleMinutes: 20,
        }),
      (error: unknown) => {
        assert.ok(isReplicatorError(error, "CONFIG_INVALID"), String(error));
        for (const expected of [
          /workers: 12 must be a whole number from 1 to maxWorkers \(10\)/,
          /scheduleMinutes: 20 must be one of 1\.\.13 \(a run lasts its tick plus the overlap/,
          /source\.alias: "bad alias"/,
          /source\.tls: must be true with saslMechanism aws-msk-iam/,
          /target\.bootstrapServers: "t" does not match/,
          /target\.tls: "true" is not one of true, false/,
        ])
          assert.match(error.message, expected);
        assert.equal((error.details.problems as string[]).length, 6);
        return true;
      },
    );
  });

  it("refuses unknown keys at every level, naming each and the keys allowed, before the problems they cause", () => {
    // Prepare
    const stack = new Stack(new App({ context: CDK_CONTEXT }), "Typos", { env: { region: "eu-west-1" } });
    // A JavaScript caller (or a spread of a loosely typed object) is not held to the types.
    const props = {
      source: { bootstrapServers: "s:9092", alias: "idc1", bootstrapServer: "s:9092" },
      target: { bootstrapServers: "t:9092" },
      whitelist: "ORDERS",
      workers: 1,
      scheduleMinutes: 1,
      vpc: { subnetIds: ["subnet-0123"], securityGroupId: ["sg-0123"] },
      schedule: 5,
    } as unknown as KafkaReplicatorProps;

    // Act and assess
    assert.throws(
      () => new KafkaReplicator(stack, "Replicator", props),
      (error: unknown) => {
        assert.ok(isReplicatorError(error, "CONFIG_INVALID"), String(error));
        assert.deepEqual(error.details.problems, [
          "source.bootstrapServer: unknown key; allowed: bootstrapServers, tls, saslMechanism, secretArn, mskClusterArn, alias",
          "vpc.securityGroupId: unknown key; allowed: subnetIds, securityGroupIds",
          "schedule: unknown key; allowed: source, target, whitelist, blacklist, renamePolicy, groupWhitelist, groupBlacklist, workers, maxWorkers, scheduleMinutes, vpc, tableRemovalPolicy",
          "vpc.securityGroupIds: expected a list of sg-... ids, at least one, got nothing",
        ]);
        return true;
      },
    );
  });

  it("compiles a whitelist known at synth time with the functions' pattern checker (regression: a bad regex deployed)", () => {
    const stack = new Stack(new App({ context: CDK_CONTEXT }), "Regex", { env: { region: "eu-west-1" } });

    assert.throws(
      () =>
        new KafkaReplicator(stack, "Replicator", {
          source: { bootstrapServers: "s:9092", alias: "idc1" },
          target: { bootstrapServers: "t:9092" },
          whitelist: "ORDERS(",
          blacklist: "A,B",
          groupWhitelist: "billing(?!-test)",
          workers: 1,
          scheduleMinutes: 1,
        }),
      (error: unknown) => {
        assert.ok(isReplicatorError(error, "CONFIG_INVALID"), String(error));
        const problems = error.details.problems as string[];
        assert.equal(problems.length, 3, problems.join("\n"));
        assert.match(problems[0] ?? "", /^whitelist: invalid regular expression "ORDERS\(": /);
        assert.match(problems[1] ?? "", /^blacklist: "A,B" uses "," as a separator .* "A\|B"$/);
        assert.match(problems[2] ?? "", /^groupWhitelist: invalid regular expression .*lookaround/);
        return true;
      },
    );
  });

  it("refuses more than 100 worker slots (EventBridge rules and CloudFormation resources)", () => {
    const stack = new Stack(new App({ context: CDK_CONTEXT }), "Huge", { env: { region: "eu-west-1" } });

    assert.throws(
      () =>
        new KafkaReplicator(stack, "Replicator", {
          source: { bootstrapServers: "s:9092", alias: "idc1" },
          target: { bootstrapServers: "t:9092" },
          whitelist: "ORDERS",
          workers: 3,
          maxWorkers: 101,
          scheduleMinutes: 5,
        }),
      /maxWorkers: 101 must be a whole number from 1 to 100, known at synth time/,
    );
  });

  it("narrows the target topics to <alias>.* when renaming with prefix, every topic with identity", () => {
    const targetTopics = (renamePolicy: "prefix" | "identity") => {
      // Prepare
      const stack = new Stack(new App({ context: CDK_CONTEXT }), `Msk${renamePolicy}`, {
        env: { region: "eu-west-1" },
      });
      const cluster = (name: string) => `arn:aws:kafka:eu-west-1:123456789012:cluster/${name}/0f1e2d3c`;

      // Act
      new KafkaReplicator(stack, "Replicator", {
        source: { bootstrapServers: "s:9092", alias: "idc1", mskClusterArn: cluster("src") },
        target: { bootstrapServers: "t:9092", mskClusterArn: cluster("tgt") },
        whitelist: "ORDERS",
        renamePolicy,
        workers: 1,
        scheduleMinutes: 1,
      });
      const statements = Object.values(Template.fromStack(stack).findResources("AWS::IAM::Policy")).flatMap(
        (p) =>
          (p as { Properties: { PolicyDocument: { Statement: { Resource: unknown }[] } } }).Properties
            .PolicyDocument.Statement,
      );
      // Distinct: the group offset sync's policy names the same topics as the replication's.
      return [...new Set(statements.map((st) => String(st.Resource)).filter((r) => r.includes(":topic/")))];
    };

    // Assess
    assert.deepEqual(targetTopics("prefix").sort(), [
      "arn:aws:kafka:eu-west-1:123456789012:topic/src/0f1e2d3c/*",
      "arn:aws:kafka:eu-west-1:123456789012:topic/tgt/0f1e2d3c/idc1.*",
    ]);
    assert.deepEqual(targetTopics("identity").sort(), [
      "arn:aws:kafka:eu-west-1:123456789012:topic/src/0f1e2d3c/*",
      "arn:aws:kafka:eu-west-1:123456789012:topic/tgt/0f1e2d3c/*",
    ]);
  });

  it("takes a parameter as a deploy-time choice only when it allows exactly the prop's values", () => {
    const stack = new Stack(new App({ context: CDK_CONTEXT }), "Choices");
    const loose = new CfnParameter(stack, "Loose", { type: "String", allowedValues: ["prefix", "suffix"] });
    assert.throws(
      () => deployTimeChoice(loose, ["identity", "prefix"]),
      /parameter Loose allows \["prefix","suffix"\], a choice among \["identity","prefix"\] needs exactly those/,
    );
    const exact = new CfnParameter(stack, "Exact", { type: "String", allowedValues: ["prefix", "identity"] });
    const choice: KafkaReplicatorProps["renamePolicy"] = deployTimeChoice(exact, ["identity", "prefix"]);
    assert.deepEqual(stack.resolve(choice), { Ref: "Exact" });
  });
});
