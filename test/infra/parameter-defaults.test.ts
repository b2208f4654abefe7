/** Parameter defaults given at synth (context `kafka-mirror:parameters`): checked, then set. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { App } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { KafkaMirrorStack } from "../../infra/kafka-mirror-stack.js";
import { isReplicatorError } from "../../lib/errors.js";
import { NO_BUNDLING } from "../helpers/cdk.js";

/** No bundling: these tests read parameters, not function code. */

describe("parameter defaults", () => {
  it("become the parameters' defaults, typed as the parameter is", () => {
    // Prepare
    const app = new App({ context: NO_BUNDLING });

    // Act
    const stack = new KafkaMirrorStack(app, "Defaults", {
      env: { region: "eu-west-1" },
      parameterDefaults: {
        Whitelist: "BIN-BI-TOPIC|PUSH-BI-TOPIC",
        SourceAlias: "idc1",
        Workers: "4",
        SourceTls: true,
      },
    });
    const parameters = Template.fromStack(stack, { skipCyclicalDependenciesCheck: true }).toJSON()
      .Parameters as Record<string, { Default?: unknown }>;

    // Assess
    assert.equal(parameters.Whitelist?.Default, "BIN-BI-TOPIC|PUSH-BI-TOPIC");
    assert.equal(parameters.SourceAlias?.Default, "idc1");
    assert.equal(parameters.Workers?.Default, 4);
    assert.equal(parameters.SourceTls?.Default, "true");
    assert.equal(parameters.ScheduleRate?.Default, 5, "the others keep their own defaults");
  });

  it("refuses an unknown parameter, a bad regex and values the parameter's constraints refuse, in one line", () => {
    const app = new App({ context: NO_BUNDLING });

    assert.throws(
      () =>
        new KafkaMirrorStack(app, "BadDefaults", {
          env: { region: "eu-west-1" },
          parameterDefaults: {
            Whitelst: "ORDERS",
            Whitelist: "ORDERS(",
            GroupWhitelist: "billing(?=-prod)",
            Workers: 500,
            SourceTls: "yes",
            SourceAlias: "bad alias",
            LagSecondsThreshold: -1,
          },
        }),
      (error: unknown) => {
        assert.ok(isReplicatorError(error, "CONFIG_INVALID"), String(error));
        assert.match(error.message, /^invalid parameter defaults of stack BadDefaults: /);
        assert.doesNotMatch(error.message, /\n/);
        const problems = error.details.problems as string[];
        assert.match(problems[0] ?? "", /^Whitelst: unknown parameter; allowed: Whitelist, Blacklist, /);
        assert.match(problems[1] ?? "", /^Whitelist: invalid regular expression "ORDERS\(": /);
        assert.match(problems[2] ?? "", /^GroupWhitelist: invalid regular expression .*lookaround/);
        assert.equal(problems[3], "Workers: 500 is not one of 1..100");
        assert.equal(problems[4], 'SourceTls: "yes" is not one of true, false');
        assert.match(problems[5] ?? "", /^SourceAlias: "bad alias" does not match .*\(required: a name/);
        assert.equal(problems[6], "LagSecondsThreshold: -1 is outside 0..inf");
        assert.equal(problems.length, 7);
        return true;
      },
    );
  });
});
