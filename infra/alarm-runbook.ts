/**
 * What each alarm means and what on-call does about it, once: the alarms' descriptions are made
 * from it (replicator-alarms.ts) and the README's alarm table must say the same (a test compares
 * them). Text is README markdown; descriptions drop the backticks.
 */

export interface AlarmRunbook {
  /** What broke, one or two sentences: the description's opening. */
  readonly broke: string;
  /** The README's "Fires when". */
  readonly firesWhen: string;
  /** The README's "What to do": the runbook step the description ends with. */
  readonly whatToDo: string;
}

const FUNCTION_ERRORS = {
  firesWhen: "a function invocation failed in 2 of 3 minutes",
  whatToDo:
    "Usually config or credentials (`CONFIG_INVALID` names the field) or an unreachable cluster or table: the function's log group (outputs `ReplicateLogGroupName`, `LagLogGroupName`) has the error.",
};

const FUNCTION_THROTTLES = {
  firesWhen: "invocations were throttled",
  whatToDo: "Runs overlapping (a run overstayed its tick) or the account's concurrency is exhausted.",
};

export const ALARM_RUNBOOK = {
  MaxLagRecords: {
    broke: "Replication is falling behind: a topic has more records not yet copied than LagRecordsThreshold.",
    firesWhen:
      "the most lagging topic has more than `LagRecordsThreshold` records not yet copied, 3 of 5 minutes; also when the `lag` function publishes nothing",
    whatToDo:
      "The dashboard's lag per topic names the topic; `kafka-mirror status` (README *Operations*) shows its partitions, owners and last progress. If throughput is the limit, raise `Workers` (and partitions spread) or lower `ScheduleRate`; if `lag` itself is silent, see its errors.",
  },
  MaxLagSeconds: {
    broke: "Replication is late: the oldest record not yet copied is older than LagSecondsThreshold.",
    firesWhen:
      "the oldest record not yet copied is older than `LagSecondsThreshold`, 3 of 5 minutes (missing data breaches)",
    whatToDo:
      "As for `MaxLagRecords` (the dashboard's lag in seconds per topic names the topic); a long tick adds up to one tick of latency by design.",
  },
  Stalled: {
    broke: "Replication is stalled: partitions have lag but no checkpoint moved for 5 minutes.",
    firesWhen: "some partition has lag but no checkpoint moved for 5 minutes (missing data breaches)",
    whatToDo:
      "`kafka-mirror status` names the partitions and their owners. Look for `RECORD_REJECTED` (a record the target refuses: raise the target's `max.message.bytes`), `TARGET_PARTITIONS_TOO_FEW`, connectivity or auth errors in the `replicate` logs.",
  },
  LostRecords: {
    broke: "Records were lost for the target: source retention deleted them before they were copied.",
    firesWhen: "source retention deleted records before they were copied",
    whatToDo:
      "Data is gone for the target (the dashboard's lost records per topic names the topic); find why lag grew that far and raise source retention or throughput.",
  },
  ReplicationErrors: {
    broke: "Partitions or topics stopped with an error.",
    firesWhen: "partitions or topics stopped with an error in 2 of 3 minutes",
    whatToDo:
      "The `replicate` logs name topic, partition and error code; the dashboard's failed partitions table lists them by error code.",
  },
  PartitionsFailing: {
    broke:
      "Partitions keep stopping on a non-retryable error: retries after a backoff have not fixed them, so they are not being copied.",
    firesWhen:
      "partitions stopped on a non-retryable error in 2 of the last 15 minutes: retries after a backoff are not fixing them (each live worker retries at least every 5 minutes)",
    whatToDo:
      '`PartitionsFailed` by `ErrorCode` says which error; the `replicate` logs ("partition stopped on ...") name topic, partition and Kafka error. A setting no retry can change is logged once per run with the fix: `RECORD_REJECTED` (raise `max.message.bytes` on the target topic, or set `target.compression`), `INVALID_TRANSACTION_TIMEOUT` (lower `leases.durationMs`, or raise the target brokers\' `transaction.max.timeout.ms`). The next retry copies the partition once fixed.',
  },
  GroupSyncFailing: {
    broke: "Consumer-group offset sync failed or went stale: target offsets may lag the source groups'.",
    firesWhen:
      "the consumer-group offset sync failed for some group (or could not list groups), or published nothing (stale), 3 of 5 minutes",
    whatToDo:
      "The `lag` logs (\"group offset sync failed\") name the group and error. Until fixed, target offsets lag the source groups': `kafka-mirror offsets` shows by how much, the dashboard's group sync lag the largest.",
  },
  ReplicateFunctionErrors: { broke: "The replicate function's invocations failed.", ...FUNCTION_ERRORS },
  LagFunctionErrors: { broke: "The lag function's invocations failed.", ...FUNCTION_ERRORS },
  ReplicateFunctionThrottles: { broke: "The replicate function was throttled.", ...FUNCTION_THROTTLES },
  LagFunctionThrottles: { broke: "The lag function was throttled.", ...FUNCTION_THROTTLES },
} as const satisfies Record<string, AlarmRunbook>;

export type AlarmId = keyof typeof ALARM_RUNBOOK;

/** Where an alarm fired: known at synth (stack, region) or a token (alias, dashboard URL). */
export interface AlarmPlace {
  readonly stackName: string;
  readonly sourceAlias: string;
  readonly region: string;
  readonly dashboardUrl: string;
}

/** CloudWatch's limits on an alarm's name and description. */
export const ALARM_NAME_MAX = 255;
export const ALARM_DESCRIPTION_MAX = 1024;

/** `<stack>-<alias>-<id>`: fixed, so a notification and a console search find the same alarm. */
export function alarmName(id: AlarmId, place: AlarmPlace): string {
  return `${place.stackName}-${place.sourceAlias}-${id}`;
}

/** What broke, where, and what to do: the runbook step, then the dashboard. */
export function alarmDescription(id: AlarmId, place: AlarmPlace): string {
  const { broke, whatToDo } = ALARM_RUNBOOK[id];
  const plain = (markdown: string) => markdown.replaceAll("`", "").replaceAll("*", "");
  return `${place.stackName} (source alias ${place.sourceAlias}, ${place.region}): ${plain(broke)} What to do: ${plain(whatToDo)} Dashboard: ${place.dashboardUrl}`;
}
