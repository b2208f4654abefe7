/**
 * The replicator's IAM grants, each exactly what the code calls, and each wildcard acknowledged
 * for cdk-nag with the reason it is needed. A grant whose input is a parameter that may be empty
 * exists only under a condition that the parameter is set.
 */
import { CfnCondition, CfnResource, Fn, Stack, Token, Validations } from "aws-cdk-lib";
import type { ITableV2 } from "aws-cdk-lib/aws-dynamodb";
import { Policy, PolicyStatement, type Role } from "aws-cdk-lib/aws-iam";
import type { NodejsFunction } from "aws-cdk-lib/aws-lambda-nodejs";
import { flattenCfnReference } from "cdk-nag/lib/utils/flatten-cfn-reference.js";
import type { Construct, IConstruct } from "constructs";

/** Makes the construct's CloudFormation resource exist only under `condition`. */
export function onlyIf(construct: IConstruct, condition: CfnCondition): void {
  const resource = construct.node.defaultChild;
  if (!(resource instanceof CfnResource))
    throw new Error(`${construct.node.path} has no CloudFormation resource`);
  resource.cfnOptions.condition = condition;
}

/** A condition true when the (token) value is not ""; one per id, however many grants ask. */
export function isSet(scope: Construct, id: string, value: string): CfnCondition {
  const existing = scope.node.tryFindChild(id);
  if (existing instanceof CfnCondition) return existing;
  return new CfnCondition(scope, id, { expression: Fn.conditionNot(Fn.conditionEquals(value, "")) });
}

/** Acknowledges cdk-nag's wildcard finding on `resource`, named as cdk-nag names it. */
export function acknowledgeWildcard(policy: Policy, resource: string, reason: string): void {
  const flat = flattenCfnReference(Stack.of(policy).resolve(resource));
  Validations.of(policy).acknowledge({ id: `AwsSolutions::AwsSolutions-IAM5[Resource::${flat}]`, reason });
}

/** Exactly the calls lib/dynamodb makes, on this table only. */
export function grantLeaseTable(fn: NodejsFunction, table: ITableV2): void {
  fn.addToRolePolicy(
    new PolicyStatement({
      actions: [
        "dynamodb:BatchGetItem",
        // The lease leader deletes worker items dead for 15 minutes (lib/core/run/lease-leader.ts).
        "dynamodb:DeleteItem",
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:Scan",
        "dynamodb:DescribeTable",
      ],
      resources: [table.tableArn],
    }),
  );
}

/** GetSecretValue on the cluster's own secret, only when one is configured. */
export function grantSecret(
  scope: Construct,
  functions: readonly NodejsFunction[],
  secretArn: string | undefined,
  side: string,
): void {
  if (secretArn === undefined) return;
  const policy = new Policy(scope, `${side}Secret`, {
    statements: [new PolicyStatement({ actions: ["secretsmanager:GetSecretValue"], resources: [secretArn] })],
  });
  for (const fn of functions) policy.attachToRole(fn.role as Role);
  if (Token.isUnresolved(secretArn)) onlyIf(policy, secretIsSet(scope, side, secretArn));
}

/** The condition that `side`'s (token) secret ARN is set; one per side, for grants and outputs alike. */
export function secretIsSet(scope: Construct, side: string, secretArn: string): CfnCondition {
  return isSet(scope, `${side}SecretSet`, secretArn);
}

export interface MskAccess {
  readonly cluster: string[];
  readonly topics: string[];
  /** The topics reached: a name prefix ("" for every topic of the cluster; a token allowed) and why. */
  readonly topicPrefix: string;
  readonly topicsReason: string;
  /** Transactional ids named `<prefix>*`, for fenced writes. */
  readonly transactionalIds?: { actions: string[]; prefix: string; reason: string };
  /** Every consumer group of the cluster, for the offset sync. */
  readonly groups?: { actions: string[]; reason: string };
  /** Names the cluster's "ARN is set" condition when `side` names a second policy for it. @default side */
  readonly conditionSide?: string;
}

/**
 * MSK IAM access to one cluster and its topics. Topic ARNs share the cluster ARN's name and id
 * (`...:cluster/<name>/<uuid>` → `...:topic/<name>/<uuid>/<topic>`).
 */
export function grantMskIam(
  scope: Construct,
  functions: readonly NodejsFunction[],
  arn: string | undefined,
  side: string,
  access: MskAccess,
): void {
  if (arn === undefined) return;
  const partitionAndAccount = Fn.select(0, Fn.split(":cluster/", arn));
  const nameAndId = Fn.select(1, Fn.split(":cluster/", arn));
  const under = (kind: string, prefix: string) =>
    Fn.join("", [partitionAndAccount, `:${kind}/`, nameAndId, "/", prefix, "*"]);
  const topics = under("topic", access.topicPrefix);
  const txn = access.transactionalIds;
  const transactionalIds = txn === undefined ? undefined : under("transactional-id", txn.prefix);
  const groups = access.groups === undefined ? undefined : { ...access.groups, arn: under("group", "") };
  const policy = new Policy(scope, `${side}MskAccess`, {
    statements: [
      new PolicyStatement({ actions: access.cluster, resources: [arn] }),
      new PolicyStatement({ actions: access.topics, resources: [topics] }),
      ...(txn === undefined || transactionalIds === undefined
        ? []
        : [new PolicyStatement({ actions: txn.actions, resources: [transactionalIds] })]),
      ...(groups === undefined
        ? []
        : [new PolicyStatement({ actions: groups.actions, resources: [groups.arn] })]),
    ],
  });
  for (const fn of functions) policy.attachToRole(fn.role as Role);
  acknowledgeWildcard(policy, topics, access.topicsReason);
  if (txn !== undefined && transactionalIds !== undefined)
    acknowledgeWildcard(policy, transactionalIds, txn.reason);
  if (groups !== undefined) acknowledgeWildcard(policy, groups.arn, groups.reason);
  const conditionSide = access.conditionSide ?? side;
  if (Token.isUnresolved(arn)) onlyIf(policy, isSet(scope, `${conditionSide}MskClusterSet`, arn));
}
