// What each node of the real-Kafka test bed (real-kafka.ts) runs with: its server.properties and
// its JVM flags. Kafka's defaults hold except where a comment says why not: these clusters run
// one to three JVMs on a 2-core machine next to the tests, and tests want faults to show quickly.

export interface NodePorts {
  readonly plaintext: number;
  readonly controller: number;
  readonly ssl?: number;
  readonly saslSsl?: number;
}

export interface NodeTls {
  /** PEM file with the server's private key (unencrypted PKCS#8) followed by its certificate. */
  readonly keystorePath: string;
  /** PEM file with the CA that signs the client certificates (mutual TLS). */
  readonly truststorePath: string;
}

export interface NodeConfigInput {
  readonly nodeId: number;
  /** Every node's controller address, `id@127.0.0.1:port`, the same list on every node. */
  readonly voters: string;
  readonly clusterSize: number;
  readonly ports: NodePorts;
  readonly logDir: string;
  readonly autoCreateTopics: boolean;
  readonly transactionMaxTimeoutMs?: number;
  /** SSL listener with mutual TLS, and SASL_SSL when `scram` is set. */
  readonly tls?: NodeTls;
  readonly scram: boolean;
  /** Added last: a test's own settings win over everything here. */
  readonly extra: Readonly<Record<string, string>>;
}

const SCRAM_LOGIN = "org.apache.kafka.common.security.scram.ScramLoginModule required;";

/** The server.properties text of one combined broker+controller node. */
export function serverProperties(input: NodeConfigInput): string {
  const entries = new Map<string, string>([
    ...roleAndListeners(input),
    ...clusterSized(input.clusterSize),
    ...smallMachine(),
    ...quickFaults(),
    ...testBehaviour(input),
    ...security(input),
    ...Object.entries(input.extra),
  ]);
  return `${[...entries].map(([key, value]) => `${key}=${value}`).join("\n")}\n`;
}

function roleAndListeners(input: NodeConfigInput): [string, string][] {
  const { ports } = input;
  const clients: [string, number | undefined][] = [
    ["PLAINTEXT", ports.plaintext],
    ["SSL", ports.ssl],
    ["SASL_SSL", ports.saslSsl],
  ];
  const advertised = clients.flatMap(([name, port]) => (port ? [`${name}://127.0.0.1:${port}`] : []));
  return [
    // Combined nodes with a static voter list: any node can be killed and restarted on its own,
    // and formatting needs no --standalone / --initial-controllers (those are for dynamic quorums).
    ["process.roles", "broker,controller"],
    ["node.id", String(input.nodeId)],
    ["controller.quorum.voters", input.voters],
    ["listeners", [...advertised, `CONTROLLER://127.0.0.1:${ports.controller}`].join(",")],
    ["advertised.listeners", advertised.join(",")],
    ["listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SSL:SSL,SASL_SSL:SASL_SSL"],
    ["controller.listener.names", "CONTROLLER"],
    // Replication stays on plaintext so that a TLS or SASL problem fails the client under test,
    // not the cluster.
    ["inter.broker.listener.name", "PLAINTEXT"],
    ["log.dirs", input.logDir],
  ];
}

/** Internal topics sized for the cluster: Kafka's defaults assume at least 3 brokers. */
function clusterSized(nodes: number): [string, string][] {
  const rf = String(Math.min(3, nodes));
  const minIsr = String(Math.min(2, nodes));
  return [
    // RF 3 is refused by a 1-node cluster, so the group and transaction coordinators would never
    // start there; on 3 nodes this is Kafka's own RF 3 / min.isr 2.
    ["offsets.topic.replication.factor", rf],
    ["transaction.state.log.replication.factor", rf],
    ["transaction.state.log.min.isr", minIsr],
    ["share.coordinator.state.topic.replication.factor", rf],
    ["share.coordinator.state.topic.min.isr", minIsr],
    // 50 partitions each (the default) are 50-150 replicas to create and load at the first group
    // or transaction, seconds of a 2-core machine; a handful still spreads coordinators across
    // the brokers.
    ["offsets.topic.num.partitions", "5"],
    ["transaction.state.log.num.partitions", "5"],
    ["share.coordinator.state.topic.num.partitions", "5"],
  ];
}

/** Fewer threads and buffers: up to three brokers share 2 cores with the tests. */
function smallMachine(): [string, string][] {
  return [
    ["num.network.threads", "2"], // default 3 per listener
    ["num.io.threads", "2"], // default 8
    // 128 MiB per cleaner thread by default, allocated when the cleaner starts; Kafka refuses
    // anything up to 1 MiB per thread. Compacted test topics are tiny.
    ["log.cleaner.dedupe.buffer.size", String(2 * 1024 * 1024)],
  ];
}

/** Faults must show within a test's time, not a production cluster's patience. */
function quickFaults(): [string, string][] {
  return [
    // A SIGKILLed or SIGSTOPped broker stays leader of its partitions until the controller fences
    // it, one session timeout after its last heartbeat (9 s by default, heartbeats every 2 s).
    // 4 s keeps kill/freeze tests short; shorter risks fencing a healthy broker whose heartbeat
    // waits for CPU while three JVMs start on 2 cores.
    ["broker.session.timeout.ms", "4000"],
    ["broker.heartbeat.interval.ms", "1000"],
    // The coordinator looks for transactions past their timeout every 10 s by default; a test of
    // a timed-out transaction should not wait that long for the abort.
    ["transaction.abort.timed.out.transaction.cleanup.interval.ms", "1000"],
    // The first join of a consumer group waits 3 s by default for more members.
    ["group.initial.rebalance.delay.ms", "0"],
  ];
}

function testBehaviour(input: NodeConfigInput): [string, string][] {
  const entries: [string, string][] = [
    // Kafka's default is true; off, a Metadata or Produce for a missing topic fails instead of
    // creating it, so a test proves that the replicator creates its target topics itself.
    ["auto.create.topics.enable", String(input.autoCreateTopics)],
    // Leaders move when a test says so (electPreferredLeaders, moveLeader), not when the
    // controller's 5-minute imbalance check happens to run after a broker came back.
    ["auto.leader.rebalance.enable", "false"],
    // Tests write records with fixed timestamps years in the past (deterministic data, and a copy
    // must keep them), and Kafka's time retention goes by record timestamps: with the 7-day
    // default the first retention check, 30 s after start, deleted a test's source partitions
    // under it. No topic expires by time unless a test sets retention.ms on it, and then only
    // at that first check (the next is an hour later). Retention loss is staged with
    // DeleteRecords (exactly-once/retention-loss.test.ts), not by waiting for the clock.
    ["log.retention.ms", "-1"],
    ["log.retention.check.interval.ms", String(60 * 60 * 1000)],
  ];
  if (input.transactionMaxTimeoutMs !== undefined) {
    // Caps transaction.timeout.ms (15 min by default): tests of abandoned transactions need the
    // coordinator to abort them within seconds.
    entries.push(["transaction.max.timeout.ms", String(input.transactionMaxTimeoutMs)]);
  }
  return entries;
}

function security(input: NodeConfigInput): [string, string][] {
  if (!input.tls) return [];
  const entries: [string, string][] = [
    // PEM files straight from openssl (tls-certs.ts): no JKS/PKCS#12 conversion, no passwords.
    ["ssl.keystore.type", "PEM"],
    ["ssl.keystore.location", input.tls.keystorePath],
    ["ssl.truststore.type", "PEM"],
    ["ssl.truststore.location", input.tls.truststorePath],
    ["listener.name.ssl.ssl.client.auth", "required"],
  ];
  if (input.scram) {
    entries.push(
      ["listener.name.sasl_ssl.sasl.enabled.mechanisms", "SCRAM-SHA-256,SCRAM-SHA-512"],
      ["listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config", SCRAM_LOGIN],
      ["listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config", SCRAM_LOGIN],
    );
  }
  return entries;
}

export interface JvmOptions {
  /** -Xmx. */
  readonly heap: string;
  /** C1 only: starts in about half the CPU time, runs slower; never for benchmarks. */
  readonly quickJit: boolean;
  /** Where log4j writes server.log. */
  readonly logsDir: string;
  readonly log4jConfig: string;
  readonly classpath: string;
}

/** The java arguments before the main class. */
export function jvmArguments(opts: JvmOptions): string[] {
  return [
    `-Xmx${opts.heap}`,
    // The JVM's default initial heap is 1/64 of RAM (~380 MiB here) per broker; grow on demand.
    "-Xms64m",
    // G1's concurrent threads compete with the brokers and tests for 2 cores; a test broker's
    // heap is small enough for stop-the-world collections.
    "-XX:+UseSerialGC",
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
