/**
 * The CDK app's own context keys (`kafka-mirror:*`), read with one strict zod schema: from
 * cdk.json they arrive as JSON values, from `-c key=value` on the command line as strings, so a
 * string is read as JSON (or, for the regions, as a comma-separated list). An unknown key at any
 * level is refused naming the keys allowed, as the functions' config does: a misspelt
 * `securityGroupIds` must not synthesize functions outside the VPC.
 */
import { z } from "zod";
import { describeValue, section } from "../lib/config/fields.js";
import { ReplicatorError } from "../lib/errors.js";
import type { VpcPlacementProps } from "./replicator-props.js";
import { problemLines, vpcPlacementSchema } from "./replicator-props-schema.js";

export const REGIONS_CONTEXT = "kafka-mirror:regions";
/** `{ "<region>": { "subnetIds": [...], "securityGroupIds": [...] } }` for regions with private clusters. */
export const VPC_CONTEXT = "kafka-mirror:vpc";
/** `{ "<region>": { "<Parameter>": value } }`: the stack parameters' defaults, checked at synth. */
export const PARAMETERS_CONTEXT = "kafka-mirror:parameters";

/** Where the regions come from when the context names none: the CDK CLI's default region. */
export const DEFAULT_REGION_VARIABLE = "CDK_DEFAULT_REGION";

/** Context keys that look like ours (a misspelt prefix included), so a typo cannot pass as another tool's key. */
const OURS = /^kafka[-_.]?mirror/i;

// eu-west-1, us-gov-west-1, ap-southeast-1: lower-case words and a number.
const REGION = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;

const regionName = z.string().regex(REGION, {
  error: (issue) => `expected an AWS region name such as eu-west-1, got ${describeValue(issue.input)}`,
});

/** A string from `-c key=value` holding JSON; anything else as it is. */
function fromJson(value: unknown, ctx: z.RefinementCtx): unknown {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    ctx.addIssue({
      code: "custom",
      input: value,
      message: `expected JSON, got ${describeValue(value)}: ${reason}`,
    });
    return z.NEVER;
  }
}

/** A JSON list, or a comma-separated string as `-c kafka-mirror:regions=a,b` gives it. */
function regionList(value: unknown): unknown {
  if (typeof value !== "string") return value;
  if (value.trim().startsWith("[")) return fromJsonQuietly(value);
  return value
    .split(",")
    .map((r) => r.trim())
    .filter((r) => r !== "");
}

function fromJsonQuietly(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

const perRegion = <T extends z.ZodType>(value: T, what: string) =>
  z.preprocess(
    fromJson,
    z.record(regionName, value, {
      error: (issue) => `expected an object of region names to ${what}, got ${describeValue(issue.input)}`,
    }),
  );

const parameterValue = z.union([z.string(), z.number(), z.boolean()], {
  error: (issue) => `expected a string, number or boolean, got ${describeValue(issue.input)}`,
});

const contextSchema = section({
  [REGIONS_CONTEXT]: z
    .preprocess(
      regionList,
      z.array(regionName, {
        error: (issue) => `expected a list of region names, got ${describeValue(issue.input)}`,
      }),
    )
    .optional(),
  [VPC_CONTEXT]: perRegion(vpcPlacementSchema, "subnetIds and securityGroupIds").optional(),
  [PARAMETERS_CONTEXT]: perRegion(
    z.record(z.string(), parameterValue, {
      error: (issue) => `expected an object of parameter names to values, got ${describeValue(issue.input)}`,
    }),
    "parameter defaults",
  ).optional(),
});

export interface AppContext {
  /** One stack per region, in order, without repeats. */
  readonly regions: readonly string[];
  readonly vpc: Readonly<Record<string, VpcPlacementProps>>;
  readonly parameters: Readonly<Record<string, Readonly<Record<string, string | number | boolean>>>>;
}

/**
 * The app's settings from its context (`app.node.getAllContext()`), the regions falling back to
 * the CDK CLI's default region. @throws ReplicatorError CONFIG_INVALID naming every bad key.
 */
export function readAppContext(
  context: Readonly<Record<string, unknown>>,
  env: Readonly<Record<string, string | undefined>>,
): AppContext {
  const ours = Object.fromEntries(Object.entries(context).filter(([key]) => OURS.test(key)));
  const result = contextSchema.safeParse(ours);
  if (!result.success) throw invalidContext(problemLines(result.error.issues));
  const given = result.data[REGIONS_CONTEXT] ?? [];
  const fallback = env[DEFAULT_REGION_VARIABLE];
  const regions = given.length > 0 ? given : fallback ? [fallback] : [];
  if (regions.length === 0) {
    throw invalidContext([
      `${REGIONS_CONTEXT}: no regions: set it (-c ${REGIONS_CONTEXT}=eu-west-1,us-east-1) or a default region (AWS_REGION or the profile's; the CDK CLI passes it as ${DEFAULT_REGION_VARIABLE})`,
    ]);
  }
  return {
    regions: [...new Set(regions)],
    // The placement schema checked every id is a string (it types them `unknown` only because a
    // construct's caller may pass tokens, which JSON context cannot hold).
    vpc: (result.data[VPC_CONTEXT] ?? {}) as Record<string, VpcPlacementProps>,
    parameters: result.data[PARAMETERS_CONTEXT] ?? {},
  };
}

function invalidContext(problems: string[]): ReplicatorError {
  return new ReplicatorError("CONFIG_INVALID", `invalid CDK context: ${problems.join("; ")}`, {
    details: { problems },
  });
}
