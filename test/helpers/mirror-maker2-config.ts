// What MirrorMaker 2 (mirror-maker2.ts) runs with: its mm2.properties and its JVM flags. Kafka's
// and MirrorMaker's defaults hold except where a comment says why not. Sources for each setting:
// Kafka's geo-replication docs ("Exactly once", "Configuring Geo-Replication") and
// MirrorMakerConfig / MirrorSourceConfig of the same release as the jars (4.1.2).

/** A cluster as MirrorMaker sees it; RealKafka (real-kafka.ts) is one. */
export interface Mm2Cluster {
  readonly bootstrapServers: readonly string[];
  /** Only the count matters: it sizes the replication factors of the topics MM2 creates. */
  readonly brokerIds: readonly number[];
}

export interface Mm2Flow {
  readonly source: Mm2Cluster;
  readonly target: Mm2Cluster;
  /** Cluster aliases: they name MM2's internal topics, its Connect group and its worker id. */
  readonly sourceAlias: string;
  readonly targetAlias: string;
  /** A Java regular expression matched against whole source topic names (MM2's `topics`). */
  readonly topics: string;
  /** tasks.max of the MirrorSourceConnector (MM2 makes at most one task per partition). */
  readonly tasks: number;
  readonly exactlyOnce: boolean;
  /** Port of the internal REST server on 127.0.0.1. */
  readonly restPort: number;
  /** Added last: a caller's own settings win over everything here. */
  readonly extra: Readonly<Record<string, string>>;
}

const IDENTITY_POLICY = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy";

/** The mm2.properties text of a dedicated MirrorMaker 2 node copying one flow, source to target. */
export function mirrorMaker2Properties(flow: Mm2Flow): string {
  const { sourceAlias: s, targetAlias: t } = flow;
  const entries = new Map<string, string>([
    ["clusters", `${s}, ${t}`],
    [`${s}.bootstrap.servers`, flow.source.bootstrapServers.join(",")],
    [`${t}.bootstrap.servers`, flow.target.bootstrapServers.join(",")],
    // Flows are off unless enabled; only this one is, and `--clusters <target>` makes this node
    // run only the herder writing to the target (no heartbeats back to the source).
    [`${s}->${t}.enabled`, "true"],
    [`${s}->${t}.topics`, flow.topics],
    [`${s}->${t}.tasks.max`, String(flow.tasks)],
    // Topic names stay as they are (the default policy would write `<source>.<topic>`), so MM2's
    // copy lands where kafka-mirror's does and the same checks read both.
    ["replication.policy.class", IDENTITY_POLICY],
    ...replicationFactors(flow),
    ...exactlyOnce(flow),
    // The test brokers run without an authorizer: every ACL sync (every 10 min, and at start)
    // would fail with SecurityDisabledException and only add log noise.
    ["sync.topic.acls.enabled", "false"],
    ...Object.entries(flow.extra),
  ]);
  return `${[...entries].map(([key, value]) => `${key} = ${value}`).join("\n")}\n`;
}

/**
 * MirrorMaker's defaults assume 3-broker clusters (RF 3 for its internal topics, RF 2 for the
 * topics it creates on the target): on 1 broker every one of those creations fails. Sized here
 * as the brokers' own internal topics are (real-kafka-config.ts): min(3, brokers).
 */
function replicationFactors(flow: Mm2Flow): [string, string][] {
  const onTarget = String(Math.min(3, flow.target.brokerIds.length));
  const onSource = String(Math.min(3, flow.source.brokerIds.length));
  return [
    ["replication.factor", onTarget], // topics MM2 creates on the target
    ["checkpoints.topic.replication.factor", onTarget],
    ["heartbeats.topic.replication.factor", onTarget],
    // offset-syncs.topic.location defaults to "source": this one topic lives on the source.
    ["offset-syncs.topic.replication.factor", onSource],
    // Connect's own config, offset and status topics, on the cluster the herder writes to.
    ["config.storage.replication.factor", onTarget],
    ["offset.storage.replication.factor", onTarget],
    ["status.storage.replication.factor", onTarget],
  ];
}

/**
 * Exactly-once as Kafka's docs describe it for dedicated MirrorMaker clusters (3.5+, KIP-618):
 * `<target>.exactly.once.source.support = enabled` makes each task write its records and its
 * source offsets in one transaction; it needs the internal REST server (KIP-710) so followers
 * can reach the leader. That server stays on without exactly-once too: KIP-710 found dedicated
 * clusters of more than one node unable to update task configs without it. Source records of aborted transactions are not copied either way: the
 * source consumer reads read_committed (the docs' recommendation with exactly-once; without it
 * MM2 would copy aborted records as if committed).
 */
function exactlyOnce(flow: Mm2Flow): [string, string][] {
  return [
    [`${flow.targetAlias}.exactly.once.source.support`, flow.exactlyOnce ? "enabled" : "disabled"],
    ["dedicated.mode.enable.internal.rest", "true"],
    ["listeners", `http://127.0.0.1:${flow.restPort}`],
    [`${flow.sourceAlias}.consumer.isolation.level`, "read_committed"],
  ];
}

export interface Mm2JvmOptions {
  /** -Xmx. */
  readonly heap: string;
  /** C1 only: starts in about half the CPU time, runs slower; never for benchmarks. */
  readonly quickJit: boolean;
  /** Where log4j writes mirror-maker.log. */
  readonly logsDir: string;
  readonly log4jConfig: string;
  readonly classpath: string;
}

/**
 * The java arguments before the main class: those bin/connect-mirror-maker.sh and
 * kafka-run-class.sh give MirrorMaker (-Xms256M, G1 with a 20 ms pause goal), since the bench
 * measures MM2 as it ships; only the heap cap is ours to choose.
 */
export function mirrorMaker2JvmArguments(opts: Mm2JvmOptions): string[] {
  return [
    "-Xms256M",
    `-Xmx${opts.heap}`,
    "-server",
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-XX:InitiatingHeapOccupancyPercent=35",
    "-XX:+ExplicitGCInvokesConcurrent",
    ...(opts.quickJit ? ["-XX:TieredStopAtLevel=1"] : []),
    // No hsperfdata file per JVM in /tmp (jps/jstat are not used here).
    "-XX:-UsePerfData",
    "-Djava.awt.headless=true",
    `-Dkafka.logs.dir=${opts.logsDir}`,
    `-Dlog4j2.configurationFile=${opts.log4jConfig}`,
    "-cp",
    opts.classpath,
  ];
}
