/**
 * Alarms that tell on-call what to do, and the dashboard: names and descriptions evaluated for a
 * deployed SourceAlias, as CloudWatch would show them.
 */
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { App } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { ALARM_RUNBOOK } from "../../infra/alarm-runbook.js";
import { KafkaMirrorStack } from "../../infra/kafka-mirror-stack.js";
import { isReplicatorError } from "../../lib/errors.js";
import { MetricName } from "../../lib/observability/metric-names.js";
import { NO_BUNDLING } from "../helpers/cdk.js";
import { type CfnTemplate, type Deployment, evaluate } from "../helpers/cfn-evaluate.js";

const STACK = "KafkaMirror-eu-west-1";
const DASHBOARD_URL =
  "https://eu-west-1.console.aws.amazon.com/cloudwatch/home?region=eu-west-1#dashboards/dashboard/KafkaMirror-eu-west-1-replication";

type Resource = { Type: string; Properties: Record<string, unknown> };

describe("replicator alarms", () => {
  let template: CfnTemplate & { Resources: Record<string, Resource> };
  const deployed = (alias: string): Deployment => ({
    template,
    region: "eu-west-1",
    parameters: {
      SourceAlias: alias,
      SourceBootstrapServers: "s:9092",
      TargetBootstrapServers: "t:9092",
      Whitelist: "A",
    },
  });
  const ofType = (type: string) => Object.values(template.Resources).filter((r) => r.Type === type);

  before(() => {
    const stack = new KafkaMirrorStack(new App({ context: NO_BUNDLING }), STACK, {
      env: { region: "eu-west-1" },
    });
    template = Template.fromStack(stack, { skipCyclicalDependenciesCheck: true }).toJSON() as typeof template;
  });

  it("names every alarm <stack>-<alias>-<alarm> (regression: generated names)", () => {
    const names = ofType("AWS::CloudWatch::Alarm").map((a) =>
      evaluate(a.Properties.AlarmName, deployed("idc1")),
    );

    assert.deepEqual(
      names.sort(),
      Object.keys(ALARM_RUNBOOK)
        .map((id) => `${STACK}-idc1-${id}`)
        .sort(),
    );
  });

  it("describes what broke, where and what to do, within CloudWatch's limits for the longest alias", () => {
    const longest = "a".repeat(100);
    for (const alarm of ofType("AWS::CloudWatch::Alarm")) {
      const name = String(evaluate(alarm.Properties.AlarmName, deployed("idc1")));
      const id = name.slice(`${STACK}-idc1-`.length) as keyof typeof ALARM_RUNBOOK;
      const runbook = ALARM_RUNBOOK[id];
      const description = String(evaluate(alarm.Properties.AlarmDescription, deployed("idc1")));
      const plain = (text: string) => text.replaceAll("`", "").replaceAll("*", "");

      assert.ok(
        description.startsWith(`${STACK} (source alias idc1, eu-west-1): ${plain(runbook.broke)}`),
        description,
      );
      assert.ok(description.includes(` What to do: ${plain(runbook.whatToDo)}`), description);
      assert.ok(description.endsWith(` Dashboard: ${DASHBOARD_URL}`), description);
      assert.ok(String(evaluate(alarm.Properties.AlarmName, deployed(longest))).length <= 255, name);
      assert.ok(String(evaluate(alarm.Properties.AlarmDescription, deployed(longest))).length <= 1024, name);
    }
  });

  it("refuses at synth a stack name too long for the alarm names", () => {
    assert.throws(
      () =>
        new KafkaMirrorStack(new App({ context: NO_BUNDLING }), "K".repeat(128), {
          env: { region: "eu-west-1" },
        }),
      (error: unknown) => {
        assert.ok(isReplicatorError(error, "CONFIG_INVALID"), String(error));
        assert.match(
          error.message,
          /alarm ReplicateFunctionThrottles: its name would exceed 255 characters .* shorten the stack name/,
        );
        return true;
      },
    );
  });

  it("shows the alarms' state, per-topic lag, copy rate, failed partitions and group sync lag on the dashboard", () => {
    const [dashboard] = ofType("AWS::CloudWatch::Dashboard");
    assert.ok(dashboard);
    const body = JSON.parse(String(evaluate(dashboard.Properties.DashboardBody, deployed("idc1")))) as {
      widgets: { type: string; properties: Record<string, unknown> }[];
    };
    const text = JSON.stringify(body);

    const status = body.widgets.find((w) => w.type === "alarm");
    assert.ok(status, "an alarm status widget");
    assert.equal((status.properties.alarms as string[]).length, Object.keys(ALARM_RUNBOOK).length);
    for (const metric of [
      MetricName.LagRecords,
      MetricName.LagSeconds,
      MetricName.RecordsCopied,
      MetricName.LostRecords,
    ])
      assert.match(
        text,
        new RegExp(`SEARCH\\('\\{KafkaMirror,service,Topic\\} MetricName=\\\\"${metric}\\\\"`),
      );
    assert.match(text, /SUM\(SEARCH\(.*RecordsCopied/, "the copy rate over all topics");
    assert.match(text, /SEARCH\('\{KafkaMirror,service,ErrorCode\} MetricName=\\"PartitionsFailed\\"/);
    assert.match(text, new RegExp(`"${MetricName.GroupMaxRecordsNotCopied}"`), "group sync lag");
    const logs = body.widgets.find((w) => w.type === "log");
    assert.match(String(logs?.properties.query), /filter ispresent\(partitions\)/);
    assert.match(text, /Source alias \*\*idc1\*\*, region eu-west-1/);
    assert.match(text, /kafka-mirror status/, "where per-partition lag is");
  });

  it("graphs the 10 most lagging partitions from the per-partition lag metric of this stack", () => {
    const [dashboard] = ofType("AWS::CloudWatch::Dashboard");
    assert.ok(dashboard);
    const text = String(evaluate(dashboard.Properties.DashboardBody, deployed("idc1")));
    assert.match(
      text,
      new RegExp(
        `SORT\\(SEARCH\\('\\{KafkaMirror,service,Topic,Partition\\} MetricName=\\\\"${MetricName.PartitionLagRecords}\\\\" service=\\\\"[^\\\\]+\\\\"', 'Maximum', 60\\), MAX, DESC, 10\\)`,
      ),
    );
    assert.match(text, /Lag per partition: the 10 most lagging/);
  });
});
