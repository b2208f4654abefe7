import { RemovalPolicy } from "aws-cdk-lib";
import { AttributeType, Billing, TableEncryptionV2, TableV2 } from "aws-cdk-lib/aws-dynamodb";
import { Construct } from "constructs";
import { LEASE_KEY_ATTRIBUTE } from "../lib/dynamodb/lease-table.js";

export interface LeaseTableProps {
  /**
   * Physical table name; CloudFormation generates one when absent.
   * @default generated
   */
  readonly tableName?: string;
  /**
   * What happens to the table (and so every checkpoint) when the stack is deleted.
   * @default RemovalPolicy.RETAIN: losing checkpoints would restart every partition from scratch
   */
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * The lease and checkpoint table. Its key schema is the one lib/dynamodb reads and writes, taken
 * from the same constant, so the stack and the store cannot drift apart.
 */
export class LeaseTable extends Construct {
  public readonly table: TableV2;

  constructor(scope: Construct, id: string, props: LeaseTableProps = {}) {
    super(scope, id);
    this.table = new TableV2(this, "Table", {
      ...(props.tableName === undefined ? {} : { tableName: props.tableName }),
      partitionKey: { name: LEASE_KEY_ATTRIBUTE, type: AttributeType.STRING },
      billing: Billing.onDemand(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: TableEncryptionV2.awsManagedKey(),
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
    });
  }
}
