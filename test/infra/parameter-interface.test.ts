/** The console's view of the parameters: groups and labels (AWS::CloudFormation::Interface). */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { App } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { KafkaMirrorStack } from "../../infra/kafka-mirror-stack.js";
import { NO_BUNDLING } from "../helpers/cdk.js";

describe("parameter interface", () => {
  it("puts every parameter in exactly one labelled group, each with a label", () => {
    // Prepare
    const app = new App({ context: NO_BUNDLING });
    const stack = new KafkaMirrorStack(app, "Console", { env: { region: "eu-west-1" } });

    // Act
    const template = Template.fromStack(stack, { skipCyclicalDependenciesCheck: true }).toJSON();

    // Assess
    const names = Object.keys(template.Parameters as object).filter((n) => n !== "BootstrapVersion");
    assert.equal(names.length, 23);
    const ui = (template.Metadata as Record<string, unknown>)["AWS::CloudFormation::Interface"] as {
      ParameterGroups: { Label: { default: string }; Parameters: string[] }[];
      ParameterLabels: Record<string, { default: string }>;
    };
    const grouped = ui.ParameterGroups.flatMap((g) => g.Parameters);
    assert.deepEqual([...grouped].sort(), [...names].sort(), "each parameter in one group");
    assert.equal(new Set(grouped).size, grouped.length);
    for (const group of ui.ParameterGroups) assert.ok(group.Label.default.length > 0);
    assert.deepEqual(Object.keys(ui.ParameterLabels).sort(), [...names].sort());
    assert.deepEqual(ui.ParameterGroups[0]?.Parameters.slice(0, 1), ["Whitelist"], "what to mirror first");
  });
});
