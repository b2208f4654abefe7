/**
 * One of the replicator's functions (`functions/<name>.ts`), bundled locally with esbuild, with a
 * role and log group of its own, started with infra/node-flags.ts's V8 flags and, for private
 * clusters, placed in the VPC.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Duration, RemovalPolicy } from "aws-cdk-lib";
import { Policy, PolicyStatement, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import { Architecture, type CfnFunction, Runtime, Tracing } from "aws-cdk-lib/aws-lambda";
import { type BundlingOptions, NodejsFunction, OutputFormat } from "aws-cdk-lib/aws-lambda-nodejs";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import type { Construct } from "constructs";
import type { FunctionName } from "../functions/table.js";
import {
  EXEC_WRAPPER_FILE,
  FUNCTION_MALLOC_TUNABLES,
  FUNCTION_NODE_FLAGS,
  NODE_FLAGS_VARIABLE,
} from "./node-flags.js";
import { acknowledgeWildcard } from "./replicator-grants.js";
import type { VpcPlacementProps } from "./replicator-props.js";

const PROJECT_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * Packages the bundle loads at run time with a local `require` (kafkajs internals, codecs, the
 * loader of the native CRC-32C, which picks its platform's `.node` binary at require time).
 */
const COPIED_PACKAGES = ["kafkajs", "lz4js", "@bokuweb/zstd-wasm", "@node-rs/crc32"] as const;

/**
 * The functions' platform's binaries of native packages (linux arm64 glibc: @node-rs/crc32's
 * `crc32.linux-arm64-gnu.node`). npm installs a platform package only on its own platform, so
 * `npm ci`'s prepare step (scripts/lambda-native.mjs) installs these here, at the versions and
 * hashes of package-lock.json, whatever the host; the bundles copy every package its package.json
 * lists. Without them the functions would still run, on the JavaScript CRC-32C at a fifth of the
 * speed: a synth without them fails instead.
 */
const LAMBDA_NATIVE_DIR = "node_modules/.lambda-native";

/**
 * What AWSLambdaVPCAccessExecutionRole (v3) grants for network interfaces, which Lambda calls with
 * the function's role when it places the function in the subnets. Its logs actions are covered
 * by the role's own statement on the function's log group (created by the stack, so no
 * CreateLogGroup).
 */
export const VPC_ACCESS_ACTIONS = [
  "ec2:CreateNetworkInterface",
  "ec2:DescribeNetworkInterfaces",
  "ec2:DescribeSubnets",
  "ec2:DeleteNetworkInterface",
  "ec2:AssignPrivateIpAddresses",
  "ec2:UnassignPrivateIpAddresses",
] as const;

/** esbuild on this machine (no Docker), ESM for Node 22, the copied packages beside the bundle. */
const BUNDLING: BundlingOptions = {
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
      `cp "${join(inputDir, "infra", EXEC_WRAPPER_FILE)}" "${outputDir}" && chmod 755 "${join(outputDir, EXEC_WRAPPER_FILE)}"`,
      ...COPIED_PACKAGES.map((pkg) => copyPackage(join(inputDir, "node_modules"), outputDir, pkg)),
      // Listed from this checkout: CDK also asks for the commands of a Docker bundling, with the
      // paths inside its container as inputDir.
      ...lambdaNativePackages(PROJECT_ROOT).map((pkg) =>
        copyPackage(join(inputDir, LAMBDA_NATIVE_DIR, "node_modules"), outputDir, pkg),
      ),
    ],
  },
};

/** The shell command that copies `pkg` from `from` into the bundle's node_modules. */
function copyPackage(from: string, outputDir: string, pkg: string): string {
  const to = join(outputDir, "node_modules", pkg);
  return `mkdir -p "${dirname(to)}" && cp -R "${join(from, pkg)}" "${to}"`;
}

/** What node_modules/.lambda-native holds, each package checked to be there. */
function lambdaNativePackages(projectRoot: string): string[] {
  const dir = join(projectRoot, LAMBDA_NATIVE_DIR);
  const missing = `run \`npm run lambda-native\` (\`npm ci\` runs it as its prepare step)`;
  const manifestPath = join(dir, "package.json");
  if (!existsSync(manifestPath)) {
    throw new Error(`the Lambda bundles need the functions' native binaries in ${dir}: ${missing}`);
  }
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as {
    readonly optionalDependencies?: Readonly<Record<string, string>>;
  };
  const packages = Object.keys(manifest.optionalDependencies ?? {});
  const absent = packages.filter((pkg) => !existsSync(join(dir, "node_modules", pkg, "package.json")));
  if (absent.length > 0) throw new Error(`${absent.join(", ")} missing in ${dir}: ${missing}`);
  return packages;
}

export interface ReplicatorFunctionOptions {
  readonly timeout: Duration;
  readonly reservedConcurrentExecutions: number;
  readonly environment: Record<string, string>;
  readonly description: string;
  readonly vpc?: VpcPlacementProps;
}

export function replicatorFunction(
  scope: Construct,
  id: string,
  name: FunctionName,
  options: ReplicatorFunctionOptions,
): NodejsFunction {
  const logGroup = new LogGroup(scope, `${id}Logs`, {
    retention: RetentionDays.ONE_MONTH,
    removalPolicy: RemovalPolicy.DESTROY,
  });
  // A role of our own with no managed policies: logs to its own log group only.
  const role = new Role(scope, `${id}Role`, {
    assumedBy: new ServicePrincipal("lambda.amazonaws.com"),
    description: `kafka-mirror ${name} function`,
  });
  role.addToPolicy(
    new PolicyStatement({
      actions: ["logs:CreateLogStream", "logs:PutLogEvents"],
      resources: [`${logGroup.logGroupArn}`],
    }),
  );
  const fn = new NodejsFunction(scope, id, {
    entry: join(PROJECT_ROOT, "functions", `${name}.ts`),
    handler: "handler",
    projectRoot: PROJECT_ROOT,
    depsLockFilePath: join(PROJECT_ROOT, "package-lock.json"),
    runtime: Runtime.NODEJS_22_X,
    architecture: Architecture.ARM_64,
    memorySize: 1024,
    timeout: options.timeout,
    reservedConcurrentExecutions: options.reservedConcurrentExecutions,
    environment: {
      ...options.environment,
      AWS_LAMBDA_EXEC_WRAPPER: `/var/task/${EXEC_WRAPPER_FILE}`,
      [NODE_FLAGS_VARIABLE]: FUNCTION_NODE_FLAGS.join(" "),
      GLIBC_TUNABLES: FUNCTION_MALLOC_TUNABLES,
    },
    description: options.description,
    role,
    logGroup,
    tracing: Tracing.DISABLED,
    // Scheduled runs are not retried by Lambda: the next tick is the retry.
    retryAttempts: 0,
    maxEventAge: Duration.minutes(1),
    bundling: BUNDLING,
  });
  if (options.vpc !== undefined) placeInVpc(scope, fn, role, options.vpc);
  return fn;
}

/** Subnets and security groups by id: no VPC lookup, so synth stays offline. */
function placeInVpc(scope: Construct, fn: NodejsFunction, role: Role, vpc: VpcPlacementProps): void {
  const cfn = fn.node.defaultChild as CfnFunction;
  cfn.vpcConfig = { subnetIds: [...vpc.subnetIds], securityGroupIds: [...vpc.securityGroupIds] };
  const eni = new Policy(scope, `${fn.node.id}VpcAccess`, {
    statements: [new PolicyStatement({ actions: [...VPC_ACCESS_ACTIONS], resources: ["*"] })],
  });
  eni.attachToRole(role);
  // Lambda checks the role for these permissions when it creates the function in the subnets:
  // the policy must exist first (CDK orders only the role's default policy on its own).
  fn.node.addDependency(eni);
  acknowledgeWildcard(
    eni,
    "*",
    "as in AWSLambdaVPCAccessExecutionRole: DescribeNetworkInterfaces and DescribeSubnets support no resource-level permissions, and the network interfaces Lambda creates, addresses and deletes get ids only at run time (Lambda's documentation warns that a DeleteNetworkInterface scoped to less than all interfaces can cut the function off from the VPC)",
  );
}
