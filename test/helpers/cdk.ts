/**
 * What the infra tests synthesize with. CDK runs its CloudFormation template validator (a WASM
 * rule engine) on every synth unless CDK_VALIDATION is "false": about 20 s of CPU per stack on a
 * 2-core machine, most of test/infra's time while every Template.fromStack paid it (a synth of
 * three stacks: 74 s with it, 7 s without). Importing this module turns it off for the file's
 * synths; it runs where its report is what is asserted (`withTemplateValidation`, the CDK app
 * test in kafka-mirror-stack.test.ts), which synthesizes every region the way `cdk synth` does.
 */
import { readFileSync } from "node:fs";

process.env.CDK_VALIDATION = "false";

/** The context of the repository's cdk.json, as `cdk synth` passes it to the app. */
export const CDK_CONTEXT = (
  JSON.parse(readFileSync(new URL("../../cdk.json", import.meta.url), "utf8")) as {
    context: Record<string, unknown>;
  }
).context;

/** Skips esbuild bundling of the functions, for tests that read only the template. */
export const NO_BUNDLING = { "aws:cdk:bundling-stacks": [] };

/** Runs `synth` with CDK's template validator on (CDK reads the variable at each synth). */
export function withTemplateValidation<T>(synth: () => T): T {
  const before = process.env.CDK_VALIDATION;
  process.env.CDK_VALIDATION = "true";
  try {
    return synth();
  } finally {
    process.env.CDK_VALIDATION = before;
  }
}
