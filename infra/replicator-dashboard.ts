/**
 * The stack's dashboard, from the metrics the functions publish (lib/observability/metric-names.ts)
 * and the logs they write: the alarms' state first, then lag, copy rate, partition health and the
 * consumer-group offset sync.
 *
 * Lag is published per topic (`Topic` dimension), and per partition only for the most lagging
 * partitions (MAX_PARTITION_LAG_METRICS in metric-names.ts: one metric per partition would cost
 * more than it tells at thousands of partitions). SEARCH graphs follow topics and partitions that
 * appear after deployment; the per-partition graph keeps the 10 highest (SORT). Failed partitions
 * come from the replicate logs (the `partitions` field of the PartitionsFailed documents); the
 * text points at `kafka-mirror status` for the lag of every partition.
 */
import { Duration } from "aws-cdk-lib";
import {
  type Alarm,
  AlarmStatusWidget,
  AlarmWidget,
  Dashboard,
  GraphWidget,
  type IWidget,
  LogQueryWidget,
  MathExpression,
  Metric,
  TextWidget,
} from "aws-cdk-lib/aws-cloudwatch";
import type { Construct } from "constructs";
import {
  ERROR_CODE_DIMENSION,
  METRICS_NAMESPACE,
  MetricName,
  PARTITION_DIMENSION,
  SERVICE_DIMENSION,
  TOPIC_DIMENSION,
} from "../lib/observability/metric-names.js";

const PERIOD = Duration.minutes(1);

export interface DashboardProps {
  readonly dashboardName: string;
  readonly serviceName: string;
  readonly sourceAlias: string;
  readonly region: string;
  readonly alarms: readonly Alarm[];
  /** The two lag alarms, drawn with their thresholds. */
  readonly lagAlarms: readonly Alarm[];
  readonly replicateLogGroupName: string;
}

export function replicatorDashboard(scope: Construct, id: string, props: DashboardProps): Dashboard {
  const m = metricsOf(props.serviceName);
  return new Dashboard(scope, id, {
    dashboardName: props.dashboardName,
    widgets: [
      ...overviewRows(props),
      [
        ...props.lagAlarms.map((alarm) => new AlarmWidget({ alarm, title: alarm.node.id, width: 8 })),
        m.perTopic("Lag (records not yet copied) per topic", MetricName.LagRecords, "Maximum"),
      ],
      [m.topPartitions("Lag per partition: the 10 most lagging (records not yet copied)")],
      copyRow(m),
      partitionRow(m, props.replicateLogGroupName),
      groupSyncRow(m),
    ],
  });
}

/** The metrics of one stack (`service` dimension), alone or one series per topic or error code. */
function metricsOf(serviceName: string) {
  const searchExpression = (metricName: string, statistic: string, dimension: string) =>
    `SEARCH('{${METRICS_NAMESPACE},${SERVICE_DIMENSION},${dimension}} MetricName="${metricName}" ${SERVICE_DIMENSION}="${serviceName}"', '${statistic}', 60)`;
  const expression = (text: string, label: string) =>
    new MathExpression({ expression: text, usingMetrics: {}, label, period: PERIOD });
  const search = (metricName: string, statistic: string, dimension: string, label: string) =>
    expression(searchExpression(metricName, statistic, dimension), label);
  return {
    search,
    /** The sum over every topic's series. */
    total: (metricName: string, statistic: string, label: string) =>
      expression(`SUM(${searchExpression(metricName, statistic, TOPIC_DIMENSION)})`, label),
    perTopic: (title: string, metricName: string, statistic: string) =>
      new GraphWidget({
        title,
        left: [search(metricName, statistic, TOPIC_DIMENSION, metricName)],
        width: 8,
      }),
    /** The partitions with the most lag, one series each (named by topic and partition). */
    topPartitions: (title: string) =>
      new GraphWidget({
        title,
        left: [
          expression(
            `SORT(${searchExpression(MetricName.PartitionLagRecords, "Maximum", `${TOPIC_DIMENSION},${PARTITION_DIMENSION}`)}, MAX, DESC, 10)`,
            "",
          ),
        ],
        width: 24,
      }),
    service: (metricName: string, statistic: string, label: string) =>
      new Metric({
        namespace: METRICS_NAMESPACE,
        metricName,
        dimensionsMap: { [SERVICE_DIMENSION]: serviceName },
        statistic,
        period: PERIOD,
        label,
      }),
  };
}

type Metrics = ReturnType<typeof metricsOf>;

/** Which stack this is, where per-partition lag is found, and every alarm's state. */
function overviewRows(props: DashboardProps): IWidget[][] {
  return [
    [
      new TextWidget({
        markdown: `# kafka-mirror ${props.serviceName}\nSource alias **${props.sourceAlias}**, region ${props.region}. Metrics are per topic, and per partition for the most lagging ones; for the lag of every partition, its owner and last progress run \`kafka-mirror status\` with the stack's \`CliConfig\` output (README *Operations*). Every alarm's description says what to do.`,
        width: 24,
        height: 3,
      }),
    ],
    [new AlarmStatusWidget({ title: "Alarms", alarms: [...props.alarms], width: 24, height: 4 })],
  ];
}

function copyRow(m: Metrics): IWidget[] {
  return [
    m.perTopic(
      "Lag (age of the oldest record not yet copied, s) per topic",
      MetricName.LagSeconds,
      "Maximum",
    ),
    new GraphWidget({
      title: "Copy rate: records copied per minute",
      left: [
        m.search(MetricName.RecordsCopied, "Sum", TOPIC_DIMENSION, "per topic"),
        m.total(MetricName.RecordsCopied, "Sum", "all topics"),
      ],
      width: 8,
    }),
    m.perTopic("Bytes copied per minute per topic", MetricName.BytesCopied, "Sum"),
  ];
}

/** Stalled and failed partitions, lost records, and which partitions failed (from the logs). */
function partitionRow(m: Metrics, replicateLogGroupName: string): IWidget[] {
  return [
    new GraphWidget({
      title: "Partitions: stalled, failed (by error code)",
      left: [
        m.service(MetricName.StalledPartitions, "Maximum", "stalled"),
        m.search(MetricName.PartitionsFailed, "Sum", ERROR_CODE_DIMENSION, "failed"),
      ],
      width: 8,
    }),
    m.perTopic(
      "Records lost (deleted by source retention before copied) per topic",
      MetricName.LostRecords,
      "Sum",
    ),
    new LogQueryWidget({
      title: "Failed partitions (topic/partition) by error code",
      logGroupNames: [replicateLogGroupName],
      queryLines: [
        `fields @timestamp, ${ERROR_CODE_DIMENSION}, partitions`,
        "filter ispresent(partitions)",
        "sort @timestamp desc",
        "limit 50",
      ],
      width: 8,
    }),
  ];
}

/** The lag function's consumer-group offset sync: how far behind, and how each run went. */
function groupSyncRow(m: Metrics): IWidget[] {
  return [
    new GraphWidget({
      title: "Group offset sync lag: most records of a synced group not yet copied",
      left: [m.service(MetricName.GroupMaxRecordsNotCopied, "Maximum", "records not yet copied")],
      width: 12,
    }),
    new GraphWidget({
      title: "Group offset sync: groups synced, skipped (members on the target), failed",
      left: [
        m.service(MetricName.GroupsSynced, "Maximum", "synced"),
        m.service(MetricName.GroupsActiveOnTarget, "Maximum", "active on target"),
        m.service(MetricName.GroupSyncErrors, "Maximum", "failed"),
      ],
      width: 12,
    }),
  ];
}
