/**
 * One region's kafka-mirror stack: CloudFormation parameters (stack-parameters.ts) mapped onto the
 * KafkaReplicator construct and its alarms, and Outputs for the operator (stack-outputs.ts). Every operational setting is a parameter, so changing
 * the whitelist (or the fleet size, the tick, the thresholds) is `cdk deploy --parameters ...`, not
 * a code change.
 */
import { Stack, type StackProps } from "aws-cdk-lib";
import type { Construct } from "constructs";
import { KafkaReplicator } from "./kafka-replicator.js";
import { acknowledgeNagFindings } from "./nag.js";
import { applyParameterDefaults, type ParameterDefaults } from "./parameter-defaults.js";
import { addParameterInterface } from "./parameter-interface.js";
import { ReplicatorAlarms } from "./replicator-alarms.js";
import type { VpcPlacementProps } from "./replicator-props.js";
import { addOperatorOutputs } from "./stack-outputs.js";
import { stackParameters } from "./stack-parameters.js";

export { MAX_WORKERS } from "./stack-parameters.js";

export interface KafkaMirrorStackProps extends StackProps {
  /** Run the functions in these subnets (private clusters). @default outside any VPC */
  readonly vpc?: VpcPlacementProps;
  /**
   * Defaults of the stack's parameters, by name, checked at synth (parameter-defaults.ts); a
   * value given at deploy time overrides them. @default none: the parameters' own defaults
   */
  readonly parameterDefaults?: ParameterDefaults;
}

export class KafkaMirrorStack extends Stack {
  public readonly replicator: KafkaReplicator;
  public readonly alarms: ReplicatorAlarms;
  /** Kept for the lease-table tests and tools that address the table directly. */
  public get leases() {
    return this.replicator.leases;
  }

  constructor(scope: Construct, id: string, props: KafkaMirrorStackProps = {}) {
    super(scope, id, {
      description: "kafka-mirror: serverless Kafka-to-Kafka replication (one region's source to the target)",
      ...props,
    });
    const parameters = stackParameters(this);
    applyParameterDefaults(this, props.parameterDefaults ?? {});
    addParameterInterface(this);
    this.replicator = new KafkaReplicator(this, "Replicator", {
      ...parameters.replicator,
      ...(props.vpc === undefined ? {} : { vpc: props.vpc }),
    });
    this.alarms = new ReplicatorAlarms(this, "Alarms", {
      ...parameters.alarms,
      serviceName: this.replicator.serviceName,
      sourceAlias: this.replicator.config.source.alias,
      replicateLogGroupName: this.replicator.replicateFunction.logGroup.logGroupName,
      replicateFunction: this.replicator.replicateFunction,
      lagFunction: this.replicator.lagFunction,
    });
    addOperatorOutputs(this, this.replicator, this.alarms);
    acknowledgeNagFindings(this);
  }
}
