/**
 * The CDK app (`cdk.json` runs it): one kafka-mirror stack per configured region, each
 * replicating its local cluster to the central target. Regions come from the context key
 * `kafka-mirror:regions` (cdk.json, or `-c kafka-mirror:regions=eu-west-1,us-east-1`).
 * cdk-nag's AwsSolutions checks run on every synth; findings fail it unless acknowledged with
 * a reason (infra/nag.ts).
 */
import { App, Validations } from "aws-cdk-lib";
import { AwsSolutionsChecks } from "cdk-nag";
import { KafkaMirrorStack } from "./kafka-mirror-stack.js";
import type { VpcPlacementProps } from "./replicator-props.js";

export { KafkaMirrorStack } from "./kafka-mirror-stack.js";

export const REGIONS_CONTEXT = "kafka-mirror:regions";
/** `{ "<region>": { "subnetIds": [...], "securityGroupIds": [...] } }` for regions with private clusters. */
export const VPC_CONTEXT = "kafka-mirror:vpc";

/** The configured regions: a list in cdk.json or a comma-separated string on the command line. */
export function configuredRegions(app: App): string[] {
  const value: unknown = app.node.tryGetContext(REGIONS_CONTEXT);
  const list = Array.isArray(value) ? value : typeof value === "string" ? value.split(",") : [];
  const regions = list.map((r) => String(r).trim()).filter((r) => r !== "");
  if (regions.length === 0) throw new Error(`no regions: set the context key ${REGIONS_CONTEXT}`);
  return [...new Set(regions)];
}

function vpcPlacement(app: App, region: string): VpcPlacementProps | undefined {
  const all: unknown = app.node.tryGetContext(VPC_CONTEXT);
  const value =
    typeof all === "object" && all !== null ? (all as Record<string, unknown>)[region] : undefined;
  if (value === undefined) return undefined;
  const { subnetIds, securityGroupIds } = (value ?? {}) as Record<string, unknown>;
  const strings = (v: unknown) => Array.isArray(v) && v.length > 0 && v.every((s) => typeof s === "string");
  if (!strings(subnetIds) || !strings(securityGroupIds)) {
    throw new Error(`${VPC_CONTEXT}.${region} needs non-empty subnetIds and securityGroupIds lists`);
  }
  return { subnetIds: subnetIds as string[], securityGroupIds: securityGroupIds as string[] };
}

export function buildApp(app: App): KafkaMirrorStack[] {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return configuredRegions(app).map((region) => {
    const vpc = vpcPlacement(app, region);
    return new KafkaMirrorStack(app, `KafkaMirror-${region}`, {
      env: {
        region,
        ...(process.env.CDK_DEFAULT_ACCOUNT ? { account: process.env.CDK_DEFAULT_ACCOUNT } : {}),
      },
      ...(vpc === undefined ? {} : { vpc }),
    });
  });
}

// Only synthesize when run as the CDK app, not when a test imports the stack.
if (process.argv[1]?.endsWith("infra/app.ts")) {
  const app = new App();
  buildApp(app);
  app.synth();
}
