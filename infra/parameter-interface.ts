/**
 * How the CloudFormation console lists the stack's parameters (`AWS::CloudFormation::Interface`):
 * in groups, in the order an operator fills them in, each with a short label. One list holds
 * both, so a parameter cannot be grouped without a label or labelled without a group; a
 * parameter missing from it fails the synth.
 */
import type { Stack } from "aws-cdk-lib";
import { stackParameterList } from "./parameter-defaults.js";

interface ParameterGroup {
  readonly label: string;
  /** Parameter name → its label, in console order. */
  readonly parameters: Readonly<Record<string, string>>;
}

export const PARAMETER_GROUPS: readonly ParameterGroup[] = [
  {
    label: "What is mirrored",
    parameters: {
      Whitelist: "Topics to mirror (whole-name regex)",
      Blacklist: "Topics never mirrored (whole-name regex)",
      SourceAlias: "Source cluster alias (unique per target)",
      RenamePolicy: "Target topic names",
    },
  },
  {
    label: "Source cluster (this region's)",
    parameters: {
      SourceBootstrapServers: "Source bootstrap servers",
      SourceTls: "Source TLS",
      SourceSaslMechanism: "Source SASL mechanism",
      SourceSecretArn: "Source credentials secret ARN",
      SourceMskClusterArn: "Source MSK cluster ARN (IAM access)",
    },
  },
  {
    label: "Target cluster (central)",
    parameters: {
      TargetBootstrapServers: "Target bootstrap servers",
      TargetTls: "Target TLS",
      TargetSaslMechanism: "Target SASL mechanism",
      TargetSecretArn: "Target credentials secret ARN",
      TargetMskClusterArn: "Target MSK cluster ARN (IAM access)",
      TargetFencing: "Fencing of a partition's former holder",
      TargetCopy: "How records reach the target (records or batches)",
    },
  },
  {
    label: "Consumer group offset sync",
    parameters: {
      GroupWhitelist: "Groups synced to the target (whole-name regex)",
      GroupBlacklist: "Groups never synced (whole-name regex)",
    },
  },
  {
    label: "Fleet",
    parameters: {
      Workers: "Worker slots",
      ScheduleRate: "Replication tick (minutes)",
    },
  },
  {
    label: "Alarms",
    parameters: {
      LagRecordsThreshold: "Lag alarm: records not yet copied",
      LagSecondsThreshold: "Lag alarm: age of the oldest record not yet copied (s)",
      AlarmEmail: "Alarm e-mail",
    },
  },
];

/** Adds the interface metadata; @throws Error naming a parameter the list leaves out (a developer's slip). */
export function addParameterInterface(stack: Stack): void {
  const listed = new Set(PARAMETER_GROUPS.flatMap((g) => Object.keys(g.parameters)));
  const actual = stackParameterList(stack).map((p) => p.node.id);
  const missing = actual.filter((name) => !listed.has(name));
  const stale = [...listed].filter((name) => !actual.includes(name));
  if (missing.length > 0 || stale.length > 0) {
    throw new Error(
      `infra/parameter-interface.ts: add ${missing.join(", ") || "nothing"}, remove ${stale.join(", ") || "nothing"}`,
    );
  }
  stack.templateOptions.metadata = {
    ...stack.templateOptions.metadata,
    "AWS::CloudFormation::Interface": {
      ParameterGroups: PARAMETER_GROUPS.map((g) => ({
        Label: { default: g.label },
        Parameters: Object.keys(g.parameters),
      })),
      ParameterLabels: Object.fromEntries(
        PARAMETER_GROUPS.flatMap((g) => Object.entries(g.parameters)).map(([name, label]) => [
          name,
          { default: label },
        ]),
      ),
    },
  };
}
