/**
 * The replicator's EventBridge schedules: one rule per worker slot for `replicate` (slots above
 * `workers` switched off by a condition when it is a parameter), one every minute for `lag`, and
 * the template rule that checks a deploy-time `workers` and tick against what the slots offer.
 */
import { CfnCondition, CfnRule, Duration, Fn, Token } from "aws-cdk-lib";
import { Rule, RuleTargetInput, Schedule } from "aws-cdk-lib/aws-events";
import { LambdaFunction } from "aws-cdk-lib/aws-events-targets";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import { CfnPermission } from "aws-cdk-lib/aws-lambda";
import type { Construct } from "constructs";
import { FUNCTIONS } from "../functions/table.js";
import { SCHEDULE_MINUTES } from "./replicator-defaults.js";
import { onlyIf } from "./replicator-grants.js";

export interface WorkerSchedulesProps {
  readonly workers: number;
  readonly maxWorkers: number;
  readonly scheduleMinutes: number;
  /** The rate expression of the tick (a token when the tick is one). */
  readonly expression: string;
}

/**
 * One rule per worker slot, each invoking the function once per tick with its slot number as
 * input. CloudFormation has no "less than", so slot i is on when Workers equals any of
 * i..maxWorkers.
 */
export function workerSchedules(scope: Construct, fn: IFunction, props: WorkerSchedulesProps): Rule[] {
  const deployTime = Token.isUnresolved(props.workers);
  checkAtDeploy(scope, props);
  const count = deployTime ? props.maxWorkers : props.workers;
  const rules: Rule[] = [];
  for (let slot = 1; slot <= count; slot++) {
    const rule = new Rule(scope, `WorkerSchedule${slot}`, {
      description: `kafka-mirror: replicate worker ${slot} of Workers, once per tick`,
      schedule: Schedule.expression(props.expression),
      targets: [
        new LambdaFunction(fn, {
          event: RuleTargetInput.fromObject({
            source: "kafka-mirror.schedule",
            kind: FUNCTIONS.replicate.schedule.kind,
            worker: slot,
          }),
          // EventBridge retries a failed invoke (throttled, say) only within the tick's first
          // minute: a run started later would have less of its tick left; a lost tick only
          // delays copying to the next one.
          retryAttempts: 2,
          maxEventAge: Duration.minutes(1),
        }),
      ],
    });
    rules.push(rule);
  }
  // From the top slot down, each condition naming the one above it.
  let next: CfnCondition | null = null;
  if (deployTime)
    for (let slot = count; slot >= 1; slot--)
      next = switchedOnFrom(scope, rules[slot - 1] as Rule, slot, props, next);
  return rules;
}

/** The lag function every minute, whatever the replication tick. */
export function lagSchedule(scope: Construct, fn: IFunction): Rule {
  return new Rule(scope, "LagSchedule", {
    description: "kafka-mirror: measure lag and discover topics every minute",
    schedule: Schedule.rate(Duration.minutes(1)),
    targets: [
      new LambdaFunction(fn, {
        event: RuleTargetInput.fromObject({
          source: "kafka-mirror.schedule",
          kind: FUNCTIONS.lag.schedule.kind,
        }),
        retryAttempts: 0,
        maxEventAge: Duration.minutes(1),
      }),
    ],
  });
}

/**
 * The rule (and its invoke permission) exist only while Workers >= slot: slot i is on when
 * Workers is i or slot i+1 is on. Chained, the conditions grow with the slots, not with their
 * square (100 slots listing every value above them would be ~5,000 comparisons).
 */
function switchedOnFrom(
  scope: Construct,
  rule: Rule,
  slot: number,
  props: WorkerSchedulesProps,
  next: CfnCondition | null,
): CfnCondition {
  const equals = Fn.conditionEquals(Token.asString(props.workers), String(slot));
  const enabled = new CfnCondition(scope, `WorkerSlot${slot}Enabled`, {
    expression: next === null ? equals : Fn.conditionOr(equals, next),
  });
  onlyIf(rule, enabled);
  // The rule's invoke permission (CDK puts it under the rule) must exist only with the rule.
  const permissions = rule.node.findAll().filter((c): c is CfnPermission => c instanceof CfnPermission);
  if (permissions.length !== 1) throw new Error(`expected one invoke permission under ${rule.node.path}`);
  for (const permission of permissions) permission.cfnOptions.condition = enabled;
  return enabled;
}

/**
 * Deploy-time values are checked by CloudFormation before it creates anything: Workers beyond
 * maxWorkers would reserve concurrency for workers no schedule starts, and a tick outside the
 * mapping would fail halfway through the deployment.
 */
function checkAtDeploy(scope: Construct, props: WorkerSchedulesProps): void {
  const assertions = [];
  if (Token.isUnresolved(props.workers)) {
    const allowed = Array.from({ length: props.maxWorkers }, (_, i) => String(i + 1));
    assertions.push({
      assert: Fn.conditionContains(allowed, Token.asString(props.workers)),
      assertDescription: `Workers must be a whole number from 1 to ${props.maxWorkers} (the worker schedules this stack has)`,
    });
  }
  if (Token.isUnresolved(props.scheduleMinutes)) {
    assertions.push({
      assert: Fn.conditionContains(SCHEDULE_MINUTES.map(String), Token.asString(props.scheduleMinutes)),
      assertDescription: "the replication tick must be a whole number of minutes from 1 to 15",
    });
  }
  if (assertions.length > 0) new CfnRule(scope, "DeployTimeRanges", { assertions });
}
