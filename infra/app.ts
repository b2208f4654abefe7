/**
 * The CDK app (`cdk.json` runs it). Today it provisions what the replication core needs in each
 * region: the lease and checkpoint table. The Lambda functions, schedules, parameters and alarms
 * are added by the serverless issue on top of the same stack.
 */
import { App, Stack, type StackProps } from "aws-cdk-lib";
import type { Construct } from "constructs";
import { LeaseTable } from "./lease-table.js";

export class KafkaMirrorStack extends Stack {
  public readonly leases: LeaseTable;

  constructor(scope: Construct, id: string, props: StackProps = {}) {
    super(scope, id, props);
    this.leases = new LeaseTable(this, "Leases");
  }
}

// Only synthesize when run as the CDK app, not when a test imports the stack.
if (process.argv[1]?.endsWith("infra/app.ts")) {
  const app = new App();
  new KafkaMirrorStack(app, "KafkaMirror");
  app.synth();
}
