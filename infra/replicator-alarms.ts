/**
 * Alarms on replication health, sent to an SNS topic, and a dashboard of the same metrics. Lag
 * alarms watch the per-region maximum over topics (`MaxLag*`): topics come and go with the
 * whitelist, and an alarm cannot follow a topic created after deployment; the dashboard shows
 * each topic through a SEARCH expression.
 */
import { CfnCondition, Duration, Fn, Stack } from "aws-cdk-lib";
import {
  Alarm,
  AlarmWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  MathExpression,
  Metric,
  TreatMissingData,
} from "aws-cdk-lib/aws-cloudwatch";
import { SnsAction } from "aws-cdk-lib/aws-cloudwatch-actions";
import { PolicyStatement, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import { Key } from "aws-cdk-lib/aws-kms";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import { CfnSubscription, Topic } from "aws-cdk-lib/aws-sns";
import { Construct } from "constructs";
import {
  METRICS_NAMESPACE,
  MetricName,
  SERVICE_DIMENSION,
  TOPIC_DIMENSION,
} from "../lib/observability/metric-names.js";

export interface ReplicatorAlarmsProps {
  /** The `service` dimension the functions publish under. */
  readonly serviceName: string;
  readonly replicateFunction: IFunction;
  readonly lagFunction: IFunction;
  /** Alarm when the largest topic lag exceeds this many records (a token is allowed). */
  readonly lagRecordsThreshold: number;
  /** Alarm when the oldest record not yet copied is older than this many seconds (a token is allowed). */
  readonly lagSecondsThreshold: number;
  /** Subscribed to the alarm topic when not empty. */
  readonly alarmEmail?: string;
}

const PERIOD = Duration.minutes(1);

export class ReplicatorAlarms extends Construct {
  public readonly topic: Topic;
  public readonly alarms: Alarm[] = [];
  public readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: ReplicatorAlarmsProps) {
    super(scope, id);
    // CloudWatch cannot publish to a topic encrypted with the AWS-managed SNS key: a key of our own
    // lets it.
    const key = new Key(this, "TopicKey", {
      enableKeyRotation: true,
      description: "kafka-mirror alarm topic encryption",
    });
    key.addToResourcePolicy(
      new PolicyStatement({
        actions: ["kms:Decrypt", "kms:GenerateDataKey*"],
        principals: [new ServicePrincipal("cloudwatch.amazonaws.com")],
        resources: ["*"],
      }),
    );
    this.topic = new Topic(this, "Topic", {
      displayName: "kafka-mirror alarms",
      masterKey: key,
      enforceSSL: true,
    });
    if (props.alarmEmail !== undefined) {
      const subscribe = new CfnCondition(this, "EmailSet", {
        expression: Fn.conditionNot(Fn.conditionEquals(props.alarmEmail, "")),
      });
      const subscription = new CfnSubscription(this, "Email", {
        topicArn: this.topic.topicArn,
        protocol: "email",
        endpoint: props.alarmEmail,
      });
      subscription.cfnOptions.condition = subscribe;
    }

    const metric = (metricName: string, statistic: string) =>
      new Metric({
        namespace: METRICS_NAMESPACE,
        metricName,
        dimensionsMap: { [SERVICE_DIMENSION]: props.serviceName },
        statistic,
        period: PERIOD,
      });

    const action = new SnsAction(this.topic);
    const alarm = (
      alarmId: string,
      options: {
        metric: Metric;
        threshold: number;
        evaluationPeriods: number;
        datapointsToAlarm?: number;
        missing: TreatMissingData;
        description: string;
      },
    ) => {
      const a = new Alarm(this, alarmId, {
        metric: options.metric,
        threshold: options.threshold,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: options.evaluationPeriods,
        datapointsToAlarm: options.datapointsToAlarm ?? options.evaluationPeriods,
        treatMissingData: options.missing,
        alarmDescription: options.description,
      });
      a.addAlarmAction(action);
      a.addOkAction(action);
      this.alarms.push(a);
      return a;
    };

    // The lag function publishes every minute; silence means it is failing, so missing is bad.
    alarm("MaxLagRecords", {
      metric: metric(MetricName.MaxLagRecords, "Maximum"),
      threshold: props.lagRecordsThreshold,
      evaluationPeriods: 5,
      datapointsToAlarm: 3,
      missing: TreatMissingData.BREACHING,
      description:
        "Records not yet copied in the most lagging topic exceed LagRecordsThreshold (3 of 5 minutes).",
    });
    alarm("MaxLagSeconds", {
      metric: metric(MetricName.MaxLagSeconds, "Maximum"),
      threshold: props.lagSecondsThreshold,
      evaluationPeriods: 5,
      datapointsToAlarm: 3,
      missing: TreatMissingData.BREACHING,
      description: "The oldest record not yet copied is older than LagSecondsThreshold (3 of 5 minutes).",
    });
    alarm("Stalled", {
      metric: metric(MetricName.StalledPartitions, "Maximum"),
      threshold: 0,
      evaluationPeriods: 2,
      missing: TreatMissingData.BREACHING,
      description: "Partitions have lag but made no progress for 5 minutes: replication is stalled.",
    });
    // Replicate runs publish these; no run means no data, which other alarms already catch.
    alarm("LostRecords", {
      metric: metric(MetricName.TotalLostRecords, "Sum"),
      threshold: 0,
      evaluationPeriods: 1,
      missing: TreatMissingData.NOT_BREACHING,
      description: "Source retention deleted records before they were copied: they are lost for the target.",
    });
    alarm("ReplicationErrors", {
      metric: metric(MetricName.TotalErrors, "Sum"),
      threshold: 0,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      missing: TreatMissingData.NOT_BREACHING,
      description: "Partitions or topics stopped with an error (see the replicate function's logs).",
    });
    for (const [name, fn] of [
      ["Replicate", props.replicateFunction],
      ["Lag", props.lagFunction],
    ] as const) {
      alarm(`${name}FunctionErrors`, {
        metric: fn.metricErrors({ period: PERIOD, statistic: "Sum" }),
        threshold: 0,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
        missing: TreatMissingData.NOT_BREACHING,
        description: `The ${name.toLowerCase()} function failed in 2 of 3 minutes.`,
      });
      alarm(`${name}FunctionThrottles`, {
        metric: fn.metricThrottles({ period: PERIOD, statistic: "Sum" }),
        threshold: 0,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
        missing: TreatMissingData.NOT_BREACHING,
        description: `The ${name.toLowerCase()} function was throttled: runs overlap or account concurrency is exhausted.`,
      });
    }

    const perTopic = (metricName: string, statistic: string) =>
      new MathExpression({
        expression: `SEARCH('{${METRICS_NAMESPACE},${SERVICE_DIMENSION},${TOPIC_DIMENSION}} MetricName="${metricName}" ${SERVICE_DIMENSION}="${props.serviceName}"', '${statistic}', 60)`,
        usingMetrics: {},
        label: metricName,
        period: PERIOD,
      });
    this.dashboard = new Dashboard(this, "Dashboard", {
      dashboardName: `${Stack.of(this).stackName}-replication`,
      widgets: [
        [
          new GraphWidget({
            title: "Lag (records) per topic",
            left: [perTopic(MetricName.LagRecords, "Maximum")],
            width: 12,
          }),
          new GraphWidget({
            title: "Lag (seconds) per topic",
            left: [perTopic(MetricName.LagSeconds, "Maximum")],
            width: 12,
          }),
        ],
        [
          new GraphWidget({
            title: "Records copied per topic",
            left: [perTopic(MetricName.RecordsCopied, "Sum")],
            width: 12,
          }),
          new GraphWidget({
            title: "Bytes copied per topic",
            left: [perTopic(MetricName.BytesCopied, "Sum")],
            width: 12,
          }),
        ],
        this.alarms.map((a) => new AlarmWidget({ alarm: a, title: a.node.id, width: 6 })),
      ],
    });
  }
}
