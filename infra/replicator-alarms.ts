/**
 * Alarms on replication health, sent to an SNS topic, and the stack's dashboard
 * (replicator-dashboard.ts). Lag alarms watch the per-region maximum over topics (`MaxLag*`):
 * topics come and go with the whitelist, and an alarm cannot follow a topic created after
 * deployment; the dashboard shows each topic through a SEARCH expression.
 *
 * Every alarm has a fixed name, `<stack>-<SourceAlias>-<id>`, and a description that says what
 * broke, where and what to do: the runbook (alarm-runbook.ts) the README's alarm table repeats.
 */
import { CfnCondition, Duration, Fn, Stack } from "aws-cdk-lib";
import {
  Alarm,
  ComparisonOperator,
  type Dashboard,
  type IMetric,
  Metric,
  TreatMissingData,
} from "aws-cdk-lib/aws-cloudwatch";
import { SnsAction } from "aws-cdk-lib/aws-cloudwatch-actions";
import { PolicyStatement, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import { Key } from "aws-cdk-lib/aws-kms";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import { CfnSubscription, Topic } from "aws-cdk-lib/aws-sns";
import { Construct } from "constructs";
import { ReplicatorError } from "../lib/errors.js";
import { METRICS_NAMESPACE, MetricName, SERVICE_DIMENSION } from "../lib/observability/metric-names.js";
import {
  ALARM_DESCRIPTION_MAX,
  ALARM_NAME_MAX,
  type AlarmId,
  type AlarmPlace,
  alarmDescription,
  alarmName,
} from "./alarm-runbook.js";
import { replicatorDashboard } from "./replicator-dashboard.js";
import { ALIAS_MAX_LENGTH } from "./replicator-props.js";

export interface ReplicatorAlarmsProps {
  /** The `service` dimension the functions publish under. */
  readonly serviceName: string;
  /** The source cluster's alias (a token is allowed): in every alarm's name and description. */
  readonly sourceAlias: string;
  readonly replicateFunction: IFunction;
  readonly lagFunction: IFunction;
  /** The replicate function's log group, whose failed-partition records the dashboard lists. */
  readonly replicateLogGroupName: string;
  /** Alarm when the largest topic lag exceeds this many records (a token is allowed). */
  readonly lagRecordsThreshold: number;
  /** Alarm when the oldest record not yet copied is older than this many seconds (a token is allowed). */
  readonly lagSecondsThreshold: number;
  /** Subscribed to the alarm topic when not empty. */
  readonly alarmEmail?: string;
}

const PERIOD = Duration.minutes(1);

/** One alarm: above `threshold` in `datapointsToAlarm` of the last `evaluationPeriods` minutes. */
interface AlarmSpec {
  readonly id: AlarmId;
  readonly metric: IMetric;
  readonly threshold: number;
  readonly evaluationPeriods: number;
  readonly datapointsToAlarm?: number;
  readonly missing: TreatMissingData;
}

/** The alarms on the functions' own metrics, with why missing data counts as it does. */
function replicationAlarms(props: ReplicatorAlarmsProps): AlarmSpec[] {
  const metric = (metricName: string, statistic: string) =>
    new Metric({
      namespace: METRICS_NAMESPACE,
      metricName,
      dimensionsMap: { [SERVICE_DIMENSION]: props.serviceName },
      statistic,
      period: PERIOD,
    });
  // The lag function publishes every minute; silence means it is failing, so missing is bad.
  const lag = { evaluationPeriods: 5, datapointsToAlarm: 3, missing: TreatMissingData.BREACHING };
  // Replicate runs publish these; no run means no data, which other alarms already catch.
  const perRun = { threshold: 0, missing: TreatMissingData.NOT_BREACHING };
  return [
    {
      id: "MaxLagRecords",
      metric: metric(MetricName.MaxLagRecords, "Maximum"),
      threshold: props.lagRecordsThreshold,
      ...lag,
    },
    {
      id: "MaxLagSeconds",
      metric: metric(MetricName.MaxLagSeconds, "Maximum"),
      threshold: props.lagSecondsThreshold,
      ...lag,
    },
    {
      id: "Stalled",
      metric: metric(MetricName.StalledPartitions, "Maximum"),
      threshold: 0,
      evaluationPeriods: 2,
      missing: TreatMissingData.BREACHING,
    },
    {
      id: "LostRecords",
      metric: metric(MetricName.TotalLostRecords, "Sum"),
      ...perRun,
      evaluationPeriods: 1,
    },
    {
      id: "ReplicationErrors",
      metric: metric(MetricName.TotalErrors, "Sum"),
      ...perRun,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
    },
  ];
}

/** Partitions stopped on a non-retryable error that retries do not fix (lib/core/run/failure-backoff.ts). */
function partitionFailureAlarms(props: ReplicatorAlarmsProps): AlarmSpec[] {
  return [
    {
      // Failures in 2 different minutes of 15: one that a retry fixed (a transaction coordinator
      // that moved) stays quiet; one that lasts is retried by each live worker at least every
      // 5 minutes (lib/core/run/failure-backoff.ts), so every 15-minute window holds 2 and the alarm
      // does not flap while it lasts.
      id: "PartitionsFailing",
      metric: new Metric({
        namespace: METRICS_NAMESPACE,
        metricName: MetricName.PartitionsFailed,
        dimensionsMap: { [SERVICE_DIMENSION]: props.serviceName },
        statistic: "Sum",
        period: PERIOD,
      }),
      threshold: 0,
      // Replicate runs publish it; no run means no data, which other alarms already catch.
      missing: TreatMissingData.NOT_BREACHING,
      evaluationPeriods: 15,
      datapointsToAlarm: 2,
    },
  ];
}

/** The consumer-group offset sync's alarm (lib/offsets, run by the lag function). */
function groupSyncAlarms(props: ReplicatorAlarmsProps): AlarmSpec[] {
  return [
    {
      // Published by every lag run (0 while GroupWhitelist is empty): silence means the sync is stale.
      id: "GroupSyncFailing",
      metric: new Metric({
        namespace: METRICS_NAMESPACE,
        metricName: MetricName.GroupSyncErrors,
        dimensionsMap: { [SERVICE_DIMENSION]: props.serviceName },
        statistic: "Maximum",
        period: PERIOD,
      }),
      threshold: 0,
      evaluationPeriods: 5,
      datapointsToAlarm: 3,
      missing: TreatMissingData.BREACHING,
    },
  ];
}

/** Errors and throttles of each function, in 2 of 3 minutes. */
function functionAlarms(props: ReplicatorAlarmsProps): AlarmSpec[] {
  const each = {
    threshold: 0,
    evaluationPeriods: 3,
    datapointsToAlarm: 2,
    missing: TreatMissingData.NOT_BREACHING,
  };
  const errors = (fn: IFunction) => fn.metricErrors({ period: PERIOD, statistic: "Sum" });
  const throttles = (fn: IFunction) => fn.metricThrottles({ period: PERIOD, statistic: "Sum" });
  return [
    { id: "ReplicateFunctionErrors", metric: errors(props.replicateFunction), ...each },
    { id: "LagFunctionErrors", metric: errors(props.lagFunction), ...each },
    { id: "ReplicateFunctionThrottles", metric: throttles(props.replicateFunction), ...each },
    { id: "LagFunctionThrottles", metric: throttles(props.lagFunction), ...each },
  ];
}

export class ReplicatorAlarms extends Construct {
  public readonly topic: Topic;
  public readonly alarms: Alarm[] = [];
  public readonly dashboard: Dashboard;
  /** The dashboard in the CloudWatch console of the stack's region. */
  public readonly dashboardUrl: string;

  constructor(scope: Construct, id: string, props: ReplicatorAlarmsProps) {
    super(scope, id);
    this.topic = this.alarmTopic(props.alarmEmail);
    const action = new SnsAction(this.topic);
    const { stackName, region } = Stack.of(this);
    const dashboardName = `${stackName}-replication`;
    this.dashboardUrl = `https://${region}.console.aws.amazon.com/cloudwatch/home?region=${region}#dashboards/dashboard/${dashboardName}`;
    const place = { stackName, region, sourceAlias: props.sourceAlias, dashboardUrl: this.dashboardUrl };
    const specs = [
      ...replicationAlarms(props),
      ...partitionFailureAlarms(props),
      ...groupSyncAlarms(props),
      ...functionAlarms(props),
    ];
    checkAlarmTexts(
      specs.map((s) => s.id),
      place,
    );
    for (const spec of specs) {
      const alarm = new Alarm(this, spec.id, {
        alarmName: alarmName(spec.id, place),
        alarmDescription: alarmDescription(spec.id, place),
        metric: spec.metric,
        threshold: spec.threshold,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: spec.evaluationPeriods,
        datapointsToAlarm: spec.datapointsToAlarm ?? spec.evaluationPeriods,
        treatMissingData: spec.missing,
      });
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
      this.alarms.push(alarm);
    }
    this.dashboard = replicatorDashboard(this, "Dashboard", {
      dashboardName,
      serviceName: props.serviceName,
      sourceAlias: props.sourceAlias,
      region,
      alarms: this.alarms,
      lagAlarms: this.alarms.filter((a) => a.node.id.startsWith("MaxLag")),
      replicateLogGroupName: props.replicateLogGroupName,
    });
  }

  /** An encrypted topic, with the e-mail subscription when an address is given. */
  private alarmTopic(alarmEmail: string | undefined): Topic {
    // CloudWatch cannot publish to a topic encrypted with the AWS-managed SNS key: a key of our own
    // lets it.
    const key = new Key(this, "TopicKey", {
      enableKeyRotation: true,
    });
    key.addToResourcePolicy(
      new PolicyStatement({
        actions: ["kms:Decrypt", "kms:GenerateDataKey*"],
        principals: [new ServicePrincipal("cloudwatch.amazonaws.com")],
        resources: ["*"],
      }),
    );
    const topic = new Topic(this, "Topic", {
      displayName: "kafka-mirror alarms",
      masterKey: key,
      enforceSSL: true,
    });
    if (alarmEmail !== undefined) {
      const subscribe = new CfnCondition(this, "EmailSet", {
        expression: Fn.conditionNot(Fn.conditionEquals(alarmEmail, "")),
      });
      const subscription = new CfnSubscription(this, "Email", {
        topicArn: topic.topicArn,
        protocol: "email",
        endpoint: alarmEmail,
      });
      subscription.cfnOptions.condition = subscribe;
    }
    return topic;
  }
}

/**
 * Names and descriptions fit CloudWatch's limits whatever SourceAlias is deployed (up to 100
 * characters); a stack name too long for that is refused at synth rather than at deploy.
 */
function checkAlarmTexts(ids: readonly AlarmId[], place: AlarmPlace): void {
  const worst = { ...place, sourceAlias: "x".repeat(ALIAS_MAX_LENGTH) };
  const problems = ids.flatMap((id) => [
    ...(alarmName(id, worst).length > ALARM_NAME_MAX
      ? [
          `alarm ${id}: its name would exceed ${ALARM_NAME_MAX} characters with a ${worst.sourceAlias.length}-character SourceAlias: shorten the stack name ${place.stackName}`,
        ]
      : []),
    ...(alarmDescription(id, worst).length > ALARM_DESCRIPTION_MAX
      ? [
          `alarm ${id}: its description would exceed ${ALARM_DESCRIPTION_MAX} characters: shorten its runbook text or the stack name`,
        ]
      : []),
  ]);
  if (problems.length > 0) {
    throw new ReplicatorError(
      "CONFIG_INVALID",
      `alarms of stack ${place.stackName}: ${problems.join("; ")}`,
      {
        details: { problems },
      },
    );
  }
}
