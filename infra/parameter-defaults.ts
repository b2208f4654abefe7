/**
 * Defaults of the stack's CloudFormation parameters given at synth (the app's context key
 * `kafka-mirror:parameters`), so a region's settings can live in cdk.json rather than in a long
 * `--parameters` line. Each is checked at synth against its parameter's own constraints (allowed
 * values, pattern, length, range), and the topic and group patterns are compiled by the
 * functions' own checker: a typo fails `cdk synth`, not the first run. A value given with
 * `cdk deploy --parameters` still overrides the default, and is checked by CloudFormation's
 * constraints and by the functions at cold start only.
 */
import { CfnParameter, type Stack } from "aws-cdk-lib";
import { describeValue } from "../lib/config/fields.js";
import { ReplicatorError } from "../lib/errors.js";
import { patternCheck } from "./replicator-props-schema.js";

export type ParameterDefaults = Readonly<Record<string, string | number | boolean>>;

/** Parameters holding whole-name patterns, and whether "" (none) is allowed. */
export const PATTERN_PARAMETERS: Readonly<Record<string, boolean>> = {
  Whitelist: false,
  Blacklist: true,
  GroupWhitelist: true,
  GroupBlacklist: true,
};

/** The stack's own parameters (not the CDK bootstrap's version check). */
export function stackParameterList(stack: Stack): CfnParameter[] {
  return stack.node.children.filter(
    (c): c is CfnParameter => c instanceof CfnParameter && c.node.id !== "BootstrapVersion",
  );
}

/** Sets each given default after checking it. @throws ReplicatorError CONFIG_INVALID naming every bad one. */
export function applyParameterDefaults(stack: Stack, defaults: ParameterDefaults): void {
  const parameters = new Map(stackParameterList(stack).map((p) => [p.node.id, p]));
  const allowed = [...parameters.keys()].join(", ");
  const problems: string[] = [];
  for (const [name, value] of Object.entries(defaults)) {
    const parameter = parameters.get(name);
    const problem =
      parameter === undefined ? `unknown parameter; allowed: ${allowed}` : parameterProblem(parameter, value);
    if (problem !== null) problems.push(`${name}: ${problem}`);
    else if (parameter !== undefined)
      parameter.default = parameter.type === "Number" ? Number(value) : String(value);
  }
  if (problems.length > 0) {
    throw new ReplicatorError(
      "CONFIG_INVALID",
      `invalid parameter defaults of stack ${stack.stackName}: ${problems.join("; ")}`,
      { details: { problems } },
    );
  }
}

/** What CloudFormation (or, for a pattern, the functions) would refuse in `value`; null when fine. */
function parameterProblem(parameter: CfnParameter, value: string | number | boolean): string | null {
  const text = String(value);
  const optionalPattern = PATTERN_PARAMETERS[parameter.node.id];
  if (optionalPattern !== undefined) return patternCheck(optionalPattern)(text);
  const { allowedValues, allowedPattern, minLength, maxLength, minValue, maxValue } = parameter;
  if (allowedValues !== undefined && !allowedValues.includes(text))
    return `${describeValue(value)} is not one of ${listOf(allowedValues)}`;
  if (parameter.type === "Number") {
    const n = Number(value);
    if (typeof value === "boolean" || text.trim() === "" || !Number.isFinite(n))
      return `expected a number, got ${describeValue(value)}`;
    if ((minValue !== undefined && n < minValue) || (maxValue !== undefined && n > maxValue))
      return `${n} is outside ${minValue ?? "-inf"}..${maxValue ?? "inf"}`;
    return null;
  }
  if (allowedPattern !== undefined && !new RegExp(`^(?:${allowedPattern})$`).test(text))
    return `${describeValue(value)} does not match ${allowedPattern}${parameter.constraintDescription ? ` (${parameter.constraintDescription})` : ""}`;
  if (
    (minLength !== undefined && text.length < minLength) ||
    (maxLength !== undefined && text.length > maxLength)
  )
    return `${describeValue(value)} must have ${minLength ?? 0} to ${maxLength ?? "any number of"} characters`;
  return null;
}

/** `1..100` for a run of whole numbers, else the values. */
function listOf(values: readonly string[]): string {
  const numbers = values.map(Number);
  const run = numbers.every((n, i) => Number.isInteger(n) && n === (numbers[0] ?? 0) + i);
  return run && values.length > 2 ? `${values[0]}..${values.at(-1)}` : values.join(", ");
}
