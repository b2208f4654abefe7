/** The app's context keys, as cdk.json (JSON values) and `-c key=value` (strings) deliver them. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  DEFAULT_REGION_VARIABLE,
  PARAMETERS_CONTEXT,
  REGIONS_CONTEXT,
  readAppContext,
  VPC_CONTEXT,
} from "../../infra/app-context.js";
import { isReplicatorError } from "../../lib/errors.js";

const PLACEMENT = { subnetIds: ["subnet-0123"], securityGroupIds: ["sg-0123"] };

/** The problems of the one error `readAppContext` throws for `context`. */
function problemsOf(context: Record<string, unknown>, env: Record<string, string> = {}): string[] {
  try {
    readAppContext(context, env);
  } catch (error) {
    assert.ok(isReplicatorError(error, "CONFIG_INVALID"), String(error));
    assert.doesNotMatch(error.message, /\n/, "one line");
    return error.details.problems as string[];
  }
  assert.fail("expected the context to be refused");
}

describe("readAppContext", () => {
  it("reads the VPC placement given as JSON on the command line (regression: -c values are strings and were ignored)", () => {
    const context = readAppContext(
      { [REGIONS_CONTEXT]: "us-east-1", [VPC_CONTEXT]: JSON.stringify({ "us-east-1": PLACEMENT }) },
      {},
    );

    assert.deepEqual(context.regions, ["us-east-1"]);
    assert.deepEqual(context.vpc, { "us-east-1": PLACEMENT });
  });

  it("refuses a misspelt VPC key, from cdk.json or the command line, naming the key and the keys allowed", () => {
    const typo = { "us-east-1": { subnetIds: ["subnet-0123"], securityGroupId: ["sg-0123"] } };
    const expected = [
      "kafka-mirror:vpc.us-east-1.securityGroupId: unknown key; allowed: subnetIds, securityGroupIds",
      "kafka-mirror:vpc.us-east-1.securityGroupIds: expected a list of sg-... ids, at least one, got nothing",
    ];

    assert.deepEqual(problemsOf({ [REGIONS_CONTEXT]: ["us-east-1"], [VPC_CONTEXT]: typo }), expected);
    assert.deepEqual(
      problemsOf({ [REGIONS_CONTEXT]: "us-east-1", [VPC_CONTEXT]: JSON.stringify(typo) }),
      expected,
    );
  });

  it("refuses unknown kafka-mirror keys, bad region names and text that is not JSON, all at once", () => {
    const problems = problemsOf({
      "kafka-mirror:vcp": {},
      [REGIONS_CONTEXT]: "eu-west-1,us-east1",
      [PARAMETERS_CONTEXT]: "{Whitelist: ORDERS}",
      // Other tools' keys are theirs.
      "@aws-cdk/core:validateAgainstDefaultRules": true,
    });

    assert.equal(problems.length, 3, problems.join("\n"));
    assert.equal(
      problems[0],
      "kafka-mirror:vcp: unknown key; allowed: kafka-mirror:regions, kafka-mirror:vpc, kafka-mirror:parameters",
    );
    assert.equal(
      problems[1],
      'kafka-mirror:regions[1]: expected an AWS region name such as eu-west-1, got "us-east1"',
    );
    assert.match(problems[2] ?? "", /^kafka-mirror:parameters: expected JSON, got "\{Whitelist: ORDERS\}": /);
  });

  it("takes the regions from the context first, else from the CDK CLI's default region, else refuses", () => {
    const env = { [DEFAULT_REGION_VARIABLE]: "ap-southeast-1" };

    assert.deepEqual(readAppContext({ [REGIONS_CONTEXT]: ["eu-west-1", "eu-west-1"] }, env).regions, [
      "eu-west-1",
    ]);
    assert.deepEqual(readAppContext({ [REGIONS_CONTEXT]: '["eu-west-1","us-east-1"]' }, env).regions, [
      "eu-west-1",
      "us-east-1",
    ]);
    assert.deepEqual(readAppContext({}, env).regions, ["ap-southeast-1"]);
    assert.deepEqual(readAppContext({ [REGIONS_CONTEXT]: "" }, env).regions, ["ap-southeast-1"]);
    assert.match(
      problemsOf({}, {})[0] ?? "",
      /^kafka-mirror:regions: no regions: set it .* CDK_DEFAULT_REGION/,
    );
  });

  it("reads parameter defaults per region", () => {
    const context = readAppContext(
      { [PARAMETERS_CONTEXT]: { "eu-west-1": { Whitelist: "ORDERS", Workers: 4, SourceTls: true } } },
      { [DEFAULT_REGION_VARIABLE]: "eu-west-1" },
    );

    assert.deepEqual(context.parameters, {
      "eu-west-1": { Whitelist: "ORDERS", Workers: 4, SourceTls: true },
    });
  });
});
