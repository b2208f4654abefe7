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
  type IMetric,
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

/** One alarm: above `threshold` in `datapointsToAlarm` of the last `evaluationPeriods` minutes. */
interface AlarmSpec {
  readonly id: string;
  readonly metric: IMetric;
  readonly threshold: number;
  readonly evaluationPeriods: number;
  readonly datapointsToAlarm?: number;
  readonly missing: TreatMissingData;
  readonly description: string;
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
      description:
        "Records not yet copied in the most lagging topic exceed LagRecordsThreshold (3 of 5 minutes).",
    },
    {
      id: "MaxLagSeconds",
      metric: metric(MetricName.MaxLagSeconds, "Maximum"),
      threshold: props.lagSecondsThreshold,
      ...lag,
      description: "The oldest record not yet copied is older than LagSecondsThreshold (3 of 5 minutes).",
    },
    {
      id: "Stalled",
      metric: metric(MetricName.StalledPartitions, "Maximum"),
      threshold: 0,
      evaluationPeriods: 2,
      missing: TreatMissingData.BREACHING,
      description: "Partitions have lag but made no progress for 5 minutes: replication is stalled.",
    },
    {
      id: "LostRecords",
      metric: metric(MetricName.TotalLostRecords, "Sum"),
      ...perRun,
      evaluationPeriods: 1,
      description: "Source retention deleted records before they were copied: they are lost for the target.",
    },
    {
      id: "ReplicationErrors",
      metric: metric(MetricName.TotalErrors, "Sum"),
      ...perRun,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      description: "Partitions or topics stopped with an error (see the replicate function's logs).",
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
      description:
        "Partitions keep stopping on a non-retryable error (failures in 2 of the last 15 minutes): retries after a " +
        "backoff have not fixed them, so they are not being copied. PartitionsFailed by ErrorCode says which " +
        "error; the replicate logs ('partition stopped on ...') name topic, partition and Kafka error. A setting " +
        "no retry can change is logged once per run with the fix (RECORD_REJECTED: max.message.bytes on the " +
        "target topic or target.compression; INVALID_TRANSACTION_TIMEOUT: leases.durationMs or the target " +
        "brokers' transaction.max.timeout.ms); change it and the next retry copies the partition.",
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
      description:
        "Consumer-group offset sync failed or went stale (3 of 5 minutes): target offsets may lag the source groups' (see the lag function's logs).",
    },
  ];
}

/** Errors and throttles of each function, in 2 of 3 minutes. */
function functionAlarms(props: ReplicatorAlarmsProps): AlarmSpec[] {
  return (
    [
      ["Replicate", props.replicateFunction],
      ["Lag", props.lagFunction],
    ] as const
  ).flatMap(([name, fn]) =>
    (
      [
        ["Errors", fn.metricErrors({ period: PERIOD, statistic: "Sum" }), "failed in 2 of 3 minutes."],
        [
          "Throttles",
          fn.metricThrottles({ period: PERIOD, statistic: "Sum" }),
          "was throttled: runs overlap or account concurrency is exhausted.",
        ],
      ] as const
    ).map(([kind, metric, what]) => ({
      id: `${name}Function${kind}`,
      metric,
      threshold: 0,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      missing: TreatMissingData.NOT_BREACHING,
      description: `The ${name.toLowerCase()} function ${what}`,
    })),
  );
}

export class ReplicatorAlarms extends Construct {
  public readonly topic: Topic;
  public readonly alarms: Alarm[] = [];
  public readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: ReplicatorAlarmsProps) {
    super(scope, id);
    this.topic = this.alarmTopic(props.alarmEmail);
    const action = new SnsAction(this.topic);
    const specs = [
      ...replicationAlarms(props),
      ...partitionFailureAlarms(props),
      ...groupSyncAlarms(props),
      ...functionAlarms(props),
    ];
    for (const spec of specs) {
      const alarm = new Alarm(this, spec.id, {
        metric: spec.metric,
        threshold: spec.threshold,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: spec.evaluationPeriods,
        datapointsToAlarm: spec.datapointsToAlarm ?? spec.evaluationPeriods,
        treatMissingData: spec.missing,
        alarmDescription: spec.description,
      });
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
      this.alarms.push(alarm);
    }
    this.dashboard = this.replicationDashboard(props.serviceName);
  }

  /** An encrypted topic, with the e-mail subscription when an address is given. */
  private alarmTopic(alarmEmail: string | undefined): Topic {
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

  /** Per-topic lag and throughput through SEARCH expressions, and every alarm. */
  private replicationDashboard(serviceName: string): Dashboard {
    const graph = (title: string, metricName: string, statistic: string) =>
      new GraphWidget({
        title,
        left: [
          new MathExpression({
            expression: `SEARCH('{${METRICS_NAMESPACE},${SERVICE_DIMENSION},${TOPIC_DIMENSION}} MetricName="${metricName}" ${SERVICE_DIMENSION}="${serviceName}"', '${statistic}', 60)`,
            usingMetrics: {},
            label: metricName,
            period: PERIOD,
          }),
        ],
        width: 12,
      });
    return new Dashboard(this, "Dashboard", {
      dashboardName: `${Stack.of(this).stackName}-replication`,
      widgets: [
        [
          graph("Lag (records) per topic", MetricName.LagRecords, "Maximum"),
          graph("Lag (seconds) per topic", MetricName.LagSeconds, "Maximum"),
        ],
        [
          graph("Records copied per topic", MetricName.RecordsCopied, "Sum"),
          graph("Bytes copied per topic", MetricName.BytesCopied, "Sum"),
        ],
        this.alarms.map((a) => new AlarmWidget({ alarm: a, title: a.node.id, width: 6 })),
      ],
    });
  }
}
