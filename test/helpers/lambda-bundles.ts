// The bundles `cdk synth` writes (copied out of cdk.out, so nothing resolves from the repository's
// node_modules), run in their own Node process with their rule's event and the template's
// environment wiring, parameters replaced by local values. The same steps as
// test/integration/functions/bundles.test.ts, shared for tests that vary the parameters.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { functionsNode } from "./functions-node.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const INVOKER = fileURLToPath(new URL("../integration/functions/invoke-bundle.mjs", import.meta.url));

interface CfnResource {
  Type: string;
  Properties: Record<string, unknown>;
  Metadata?: Record<string, unknown>;
}

export interface Bundle {
  readonly dir: string;
  readonly variables: Record<string, unknown>;
  readonly tableId: string;
  readonly event: string;
}

export interface BundleResult {
  readonly ok: boolean;
  readonly result?: Record<string, number>;
  readonly error?: string;
  /** What getRemainingTimeInMillis() said when the handler returned. */
  readonly remainingMs?: number;
  /** The node flags the handler's process ran with. */
  readonly execArgv?: readonly string[];
  /** The Node version it ran on. */
  readonly node?: string;
}

export interface SynthesizedBundles {
  readonly replicate: Bundle;
  readonly lag: Bundle;
  remove(): void;
}

/** `cdk synth` for one region, the replicate and lag bundles copied out. */
export async function synthesizeBundles(region: string): Promise<SynthesizedBundles> {
  const outdir = mkdtempSync(join(tmpdir(), "kafka-mirror-cdk-out-"));
  await run(process.execPath, [
    join(ROOT, "node_modules/aws-cdk/bin/cdk"),
    "synth",
    "--quiet",
    "-c",
    `kafka-mirror:regions=${region}`,
    "-o",
    outdir,
  ]);
  const template = JSON.parse(readFileSync(join(outdir, `KafkaMirror-${region}.template.json`), "utf8")) as {
    Resources: Record<string, CfnResource>;
  };
  const resources = Object.entries(template.Resources);
  const tableId = resources.find(([, r]) => r.Type === "AWS::DynamoDB::GlobalTable")?.[0] ?? "";
  const find = (name: "replicate" | "lag", description: RegExp): Bundle => {
    const entry = resources.find(
      ([, r]) => r.Type === "AWS::Lambda::Function" && description.test(String(r.Properties.Description)),
    );
    assert.ok(entry, `${name} function in the template`);
    const [logicalId, fn] = entry;
    const rule = resources
      .map(([, r]) => r)
      .find(
        (r) =>
          r.Type === "AWS::Events::Rule" &&
          (r.Properties.Targets as { Arn: unknown; Input: string }[]).some(
            (t) =>
              JSON.stringify(t.Arn).includes(logicalId) && (name === "lag" || t.Input.includes('"worker":1')),
          ),
      );
    assert.ok(rule, `schedule of ${name}`);
    const dir = mkdtempSync(join(tmpdir(), `kafka-mirror-${name}-`));
    cpSync(join(outdir, String(fn.Metadata?.["aws:asset:path"])), dir, { recursive: true });
    return {
      dir,
      variables: (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables,
      tableId,
      event: (rule.Properties.Targets as { Input: string }[])[0]?.Input ?? "",
    };
  };
  const replicate = find("replicate", /copies leased/);
  const lag = find("lag", /replication lag/);
  return {
    replicate,
    lag,
    remove: () => {
      for (const dir of [outdir, replicate.dir, lag.dir]) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The bundle's variables with `Ref`s replaced: template parameters from `parameters`, the table by
 * `table`; a variable looked up from a mapping (KAFKA_MIRROR_TICK_SECONDS) from `parameters` by
 * its own name, or left unset (the function then runs without draining).
 */
export function bundleEnvironment(
  bundle: Bundle,
  parameters: Readonly<Record<string, string>>,
  table: string,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(bundle.variables)) {
    if (typeof value === "string") {
      env[name] = value;
      continue;
    }
    const ref = (value as { Ref?: string }).Ref;
    if (ref === undefined) {
      // A value looked up from a mapping (the tick): the caller's, by variable name, or unset.
      assert.ok(
        "Fn::FindInMap" in (value as object),
        `unexpected value in ${name}: ${JSON.stringify(value)}`,
      );
      const given = parameters[name];
      if (given !== undefined) env[name] = given;
      continue;
    }
    assert.ok(ref in parameters || ref === bundle.tableId, `unexpected reference ${ref} in ${name}`);
    env[name] = parameters[ref] ?? table;
  }
  return env;
}

/** The stack's parameters for two plaintext clusters: identity names, transactional fencing, no group sync. */
export function plaintextStackParameters(
  clusters: { readonly source: readonly string[]; readonly target: readonly string[] },
  whitelist: string,
): Record<string, string> {
  return {
    Whitelist: whitelist,
    Blacklist: "",
    SourceBootstrapServers: clusters.source.join(","),
    TargetBootstrapServers: clusters.target.join(","),
    SourceAlias: "idc1",
    RenamePolicy: "identity",
    TargetFencing: "transactional",
    TargetCopy: "records",
    SourceTls: "false",
    TargetTls: "false",
    SourceSaslMechanism: "none",
    TargetSaslMechanism: "none",
    SourceSecretArn: "",
    TargetSecretArn: "",
    GroupWhitelist: "",
    GroupBlacklist: "",
  };
}

/**
 * What a local invocation sets beside the bundle's own variables: test-bed timings (seconds
 * instead of minutes: a mock cluster on a shared 2-core machine) and DynamoDB Local.
 */
export function localInvocationVariables(dynamoDbEndpoint: string, region: string): Record<string, string> {
  return {
    KAFKA_MIRROR_SOURCE_REQUEST_TIMEOUT_MS: "5000",
    KAFKA_MIRROR_TARGET_REQUEST_TIMEOUT_MS: "1500",
    KAFKA_MIRROR_LEASES_DURATION_MS: "6000",
    KAFKA_MIRROR_LEASES_RENEW_INTERVAL_MS: "1000",
    KAFKA_MIRROR_LEASES_REBALANCE_INTERVAL_MS: "300",
    KAFKA_MIRROR_BATCH_MAX_WAIT_MS: "100",
    AWS_REGION: region,
    AWS_ACCESS_KEY_ID: "local",
    AWS_SECRET_ACCESS_KEY: "local",
    AWS_ENDPOINT_URL_DYNAMODB: dynamoDbEndpoint,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
    PATH: process.env.PATH ?? "",
  };
}

/**
 * Runs the handler once; resolves with its RESULT line and everything it wrote to stdout. As
 * Lambda does: on the functions' Node release (functionsNode(), not the one running the tests),
 * through the bundle's exec wrapper when the environment names one (AWS_LAMBDA_EXEC_WRAPPER, a
 * path under /var/task: here the bundle's directory).
 */
export function invokeBundle(
  bundle: Bundle,
  env: Readonly<Record<string, string>>,
  budgetMs: number,
): Promise<{ result: BundleResult; stdout: string }> {
  const node = [functionsNode(), INVOKER, bundle.dir, bundle.event, String(budgetMs)];
  const wrapper = env.AWS_LAMBDA_EXEC_WRAPPER;
  const [command, ...args] =
    wrapper === undefined ? node : [join(bundle.dir, wrapper.replace(/^\/var\/task\//, "")), ...node];
  return new Promise((resolve, reject) => {
    const child = spawn(command as string, args, {
      cwd: bundle.dir,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-4000);
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), budgetMs + 30_000);
    child.once("error", reject);
    child.once("exit", () => {
      clearTimeout(timer);
      const line = stdout.split("\n").find((l) => l.startsWith("RESULT "));
      if (line === undefined) {
        reject(new Error(`no result from the bundle\nstdout: ${stdout.slice(-2000)}\nstderr: ${stderr}`));
        return;
      }
      resolve({ result: JSON.parse(line.slice("RESULT ".length)) as BundleResult, stdout });
    });
  });
}

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    // The bundles are what is wanted, not CDK's template validator (test/helpers/cdk.ts).
    const env = { ...process.env, CDK_VALIDATION: "false" };
    const child = spawn(command, args, { cwd: ROOT, env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-4000);
    });
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} ${args.join(" ")} exited ${code}\n${stderr}`)),
    );
  });
}
