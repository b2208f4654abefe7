/**
 * The CDK app (`cdk.json` runs it): one kafka-mirror stack per configured region, each
 * replicating its local cluster to the central target. Its context keys (app-context.ts):
 * `kafka-mirror:regions` (else the CDK CLI's default region), `kafka-mirror:vpc` and
 * `kafka-mirror:parameters`, from cdk.json or `-c key=value`. cdk-nag's AwsSolutions checks run
 * on every synth; findings fail it unless acknowledged with a reason (infra/nag.ts).
 *
 * A bad context value or prop fails `cdk synth` with one line naming every bad key, and no stack
 * trace: the operator reading it needs the key, not our call stack.
 */
import { App, Validations } from "aws-cdk-lib";
import { AwsSolutionsChecks } from "cdk-nag";
import { isReplicatorError } from "../lib/errors.js";
import { readAppContext } from "./app-context.js";
import { KafkaMirrorStack } from "./kafka-mirror-stack.js";

export { DEFAULT_REGION_VARIABLE, PARAMETERS_CONTEXT, REGIONS_CONTEXT, VPC_CONTEXT } from "./app-context.js";
export { KafkaMirrorStack } from "./kafka-mirror-stack.js";

export function buildApp(
  app: App,
  env: Readonly<Record<string, string | undefined>> = process.env,
): KafkaMirrorStack[] {
  const context = readAppContext(app.node.getAllContext(), env);
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return context.regions.map((region) => {
    const vpc = context.vpc[region];
    const parameterDefaults = context.parameters[region];
    return new KafkaMirrorStack(app, `KafkaMirror-${region}`, {
      env: {
        region,
        ...(env.CDK_DEFAULT_ACCOUNT ? { account: env.CDK_DEFAULT_ACCOUNT } : {}),
      },
      ...(vpc === undefined ? {} : { vpc }),
      ...(parameterDefaults === undefined ? {} : { parameterDefaults }),
    });
  });
}

/** Synthesizes the app; a configuration error is one line on stderr and exit code 1. */
export function main(): void {
  try {
    // No synth at exit (the default under the CDK CLI): an app that failed half-built must not
    // be synthesized and validated.
    const app = new App({ autoSynth: false });
    buildApp(app);
    app.synth();
  } catch (error) {
    if (!isReplicatorError(error, "CONFIG_INVALID")) throw error;
    process.stderr.write(`kafka-mirror: ${error.message}\n`);
    process.exitCode = 1;
  }
}

// Only synthesize when run as the CDK app, not when a test imports the stack.
if (process.argv[1]?.endsWith("infra/app.ts")) main();
