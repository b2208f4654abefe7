/**
 * The functions start node with FUNCTION_NODE_FLAGS: Lambda runs the exec wrapper named by
 * AWS_LAMBDA_EXEC_WRAPPER, which must be in the bundle and executable, and which must put the
 * flags after node's path and pass the runtime's own arguments through unchanged.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { App, Stack } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { KafkaReplicator } from "../../infra/kafka-replicator.js";
import {
  EXEC_WRAPPER_FILE,
  FUNCTION_MALLOC_TUNABLES,
  FUNCTION_NODE_FLAGS,
  NODE_FLAGS_VARIABLE,
} from "../../infra/node-flags.js";
import { CDK_CONTEXT } from "../helpers/cdk.js";
import { functionsNode } from "../helpers/functions-node.js";

const WRAPPER = fileURLToPath(new URL(`../../infra/${EXEC_WRAPPER_FILE}`, import.meta.url));

describe("the functions' exec wrapper", () => {
  it("runs the runtime's command with the flags after node's path and its arguments unchanged", () => {
    // Act: as Lambda runs it, node's path first (the functions' Node release, so a flag it does
    // not know fails here), then a script and its arguments.
    const result = spawnSync(
      WRAPPER,
      [
        functionsNode(),
        "-e",
        "console.log(JSON.stringify({ execArgv: process.execArgv, argv: process.argv.slice(1) }))",
        "an argument",
        "--",
      ],
      { env: { ...process.env, [NODE_FLAGS_VARIABLE]: FUNCTION_NODE_FLAGS.join(" ") }, encoding: "utf8" },
    );

    // Assess: node took every flag (it exits 9 on one it does not know).
    assert.equal(result.status, 0, result.stderr);
    const started = JSON.parse(result.stdout) as { execArgv: string[]; argv: string[] };
    assert.deepEqual(started.execArgv.slice(0, FUNCTION_NODE_FLAGS.length), [...FUNCTION_NODE_FLAGS]);
    assert.deepEqual(started.argv, ["an argument", "--"]);
  });

  it("fails to start on a flag the functions' Node does not know, though Node 20 takes it", () => {
    // --interrupt-budget is gone from Node 22's V8 (stop 40 found it helping on Node 20).
    const result = spawnSync(WRAPPER, [functionsNode(), "-e", "0"], {
      env: { ...process.env, [NODE_FLAGS_VARIABLE]: "--interrupt-budget=144000" },
      encoding: "utf8",
    });

    assert.equal(result.status, 9, result.stderr);
    assert.match(result.stderr, /bad option: --interrupt-budget=144000/);
  });
});

describe("replicatorFunction", () => {
  const outdir = mkdtempSync(join(tmpdir(), "kafka-mirror-fn-"));
  after(() => rmSync(outdir, { recursive: true, force: true }));

  it("starts every function through the wrapper, which its bundle holds, executable", () => {
    // Prepare
    const app = new App({ context: CDK_CONTEXT, outdir });
    const stack = new Stack(app, "Flags", { env: { region: "eu-west-1" } });

    // Act
    new KafkaReplicator(stack, "Replicator", {
      source: { bootstrapServers: "s:9092", alias: "idc1" },
      target: { bootstrapServers: "t:9092" },
      whitelist: "ORDERS",
      workers: 1,
      scheduleMinutes: 1,
    });
    const functions = Object.values(Template.fromStack(stack).findResources("AWS::Lambda::Function")) as {
      Properties: { Code: { S3Key: string }; Environment: { Variables: Record<string, string> } };
    }[];

    // Assess
    assert.ok(functions.length >= 2, "the replicate and the control functions");
    for (const { Properties: fn } of functions) {
      assert.equal(fn.Environment.Variables.AWS_LAMBDA_EXEC_WRAPPER, `/var/task/${EXEC_WRAPPER_FILE}`);
      assert.equal(fn.Environment.Variables[NODE_FLAGS_VARIABLE], FUNCTION_NODE_FLAGS.join(" "));
      assert.equal(fn.Environment.Variables.GLIBC_TUNABLES, FUNCTION_MALLOC_TUNABLES);
      const assetHash = fn.Code.S3Key.replace(/\.zip$/, "");
      const mode = statSync(join(outdir, `asset.${assetHash}`, EXEC_WRAPPER_FILE)).mode;
      assert.equal(
        mode & 0o111,
        0o111,
        `${EXEC_WRAPPER_FILE} is executable by all (mode ${mode.toString(8)})`,
      );
    }
  });
});
