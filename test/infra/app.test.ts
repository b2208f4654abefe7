/**
 * The CDK app as an operator runs it: `cdk synth` with a bad context value fails with one line
 * naming the key (no stack trace, exit code non-zero), from the command line and from cdk.json.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { App } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { buildApp, REGIONS_CONTEXT, VPC_CONTEXT } from "../../infra/app.js";
import "../helpers/cdk.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CDK = join(ROOT, "node_modules/aws-cdk/bin/cdk");
const TSX = join(ROOT, "node_modules/.bin/tsx");

const TYPO = { "us-east-1": { subnetIds: ["subnet-0123"], securityGroupId: ["sg-0123"] } };
const TYPO_LINE =
  "kafka-mirror: invalid CDK context: kafka-mirror:vpc.us-east-1.securityGroupId: unknown key; allowed: subnetIds, securityGroupIds; kafka-mirror:vpc.us-east-1.securityGroupIds: expected a list of sg-... ids, at least one, got nothing";

/** `cdk synth` in `cwd`, as an operator types it; no network (notices, telemetry). */
function cdkSynth(cwd: string, outdir: string, args: string[]) {
  return spawnSync(process.execPath, [CDK, "synth", "--quiet", "--no-notices", "-o", outdir, ...args], {
    cwd,
    encoding: "utf8",
    timeout: 120_000,
    env: { ...process.env, CDK_DISABLE_CLI_TELEMETRY: "true", CDK_DEFAULT_REGION: "us-east-1" },
  });
}

describe("cdk synth with a misspelt context key", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "kafka-mirror-synth-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("fails with one line naming the key when it comes from -c (regression: synthesized outside the VPC, exit 0)", () => {
    // Act
    const result = cdkSynth(ROOT, join(dir, "cli.out"), ["-c", `${VPC_CONTEXT}=${JSON.stringify(TYPO)}`]);

    // Assess
    assert.notEqual(result.status, 0, result.stdout);
    const ours = result.stderr.split("\n").filter((line) => line.startsWith("kafka-mirror:"));
    assert.deepEqual(ours, [TYPO_LINE], result.stderr);
    assert.doesNotMatch(result.stderr, /^\s+at /m, "no stack trace");
  });

  it("fails with the same line when it comes from cdk.json (regression: a stack trace)", () => {
    // Prepare: a project whose cdk.json runs our app, with the typo in its context.
    const project = mkdtempSync(join(dir, "project-"));
    writeFileSync(
      join(project, "cdk.json"),
      JSON.stringify({
        app: `"${process.execPath}" "${TSX}" "${join(ROOT, "infra/app.ts")}"`,
        context: { [REGIONS_CONTEXT]: ["us-east-1"], [VPC_CONTEXT]: TYPO },
      }),
    );

    // Act
    const result = cdkSynth(project, join(dir, "json.out"), []);

    // Assess
    assert.notEqual(result.status, 0, result.stdout);
    const ours = result.stderr.split("\n").filter((line) => line.startsWith("kafka-mirror:"));
    assert.deepEqual(ours, [TYPO_LINE], result.stderr);
    assert.doesNotMatch(result.stderr, /^\s+at /m, "no stack trace");
  });
});

describe("buildApp", () => {
  it("places the functions in the VPC given as a JSON string, as -c delivers it", () => {
    // Prepare
    const placement = { subnetIds: ["subnet-0123456789abcdef0"], securityGroupIds: ["sg-0123456789abcdef0"] };
    const app = new App({
      context: {
        "aws:cdk:bundling-stacks": [],
        [REGIONS_CONTEXT]: "us-east-1",
        [VPC_CONTEXT]: JSON.stringify({ "us-east-1": placement }),
      },
    });

    // Act
    const [stack] = buildApp(app, {});

    // Assess
    assert.ok(stack);
    const functions = Template.fromStack(stack, { skipCyclicalDependenciesCheck: true }).findResources(
      "AWS::Lambda::Function",
    );
    const placed = Object.values(functions).map(
      (f) => (f as { Properties: { VpcConfig?: unknown } }).Properties,
    );
    assert.equal(placed.length, 2);
    for (const fn of placed)
      assert.deepEqual(fn.VpcConfig, {
        SubnetIds: placement.subnetIds,
        SecurityGroupIds: placement.securityGroupIds,
      });
  });
});
