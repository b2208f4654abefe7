import { describe, it } from "node:test";
import { App } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import { KafkaMirrorStack } from "../../infra/app.js";
import { LEASE_KEY_ATTRIBUTE } from "../../lib/dynamodb/lease-table.js";
import "../helpers/cdk.js";

describe("LeaseTable", () => {
  it("is keyed as the lease store expects, on demand, recoverable, encrypted and retained", () => {
    // Prepare
    const app = new App();

    // Act
    const template = Template.fromStack(new KafkaMirrorStack(app, "Test"));

    // Assess
    template.hasResource("AWS::DynamoDB::GlobalTable", {
      DeletionPolicy: "Retain",
      UpdateReplacePolicy: "Retain",
      Properties: Match.objectLike({
        KeySchema: [{ AttributeName: LEASE_KEY_ATTRIBUTE, KeyType: "HASH" }],
        AttributeDefinitions: [{ AttributeName: LEASE_KEY_ATTRIBUTE, AttributeType: "S" }],
        BillingMode: "PAY_PER_REQUEST",
        Replicas: [
          Match.objectLike({
            PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
          }),
        ],
      }),
    });
  });
});
