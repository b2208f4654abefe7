// Starts a real Apache Kafka cluster (the jars scripts/testbed/fetch-kafka.sh puts in
// .testbed/kafka/libs) for tests: 1 or 3 KRaft nodes, each a combined broker+controller in a JVM
// of its own, so one can be killed, frozen or restarted while the others run. The counterpart of
// mock-kafka.ts where a test must prove something about Kafka itself rather than the wire protocol.
// Data lives in a temporary folder removed by stop(); the JVMs die with the test process
// (real-kafka-node.ts).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Admin, Kafka, logLevel } from "kafkajs";
import { ElectionType, electLeaders, metadata, type PartitionState } from "./kafka-raw-requests.js";
import type { NodeTls } from "./real-kafka-config.js";
import { formatStorage, type KafkaNode, newClusterId } from "./real-kafka-node.js";
import { allocatePorts, layOutNodes, requireJars, waitFor } from "./real-kafka-setup.js";
import type { TestPki } from "./tls-certs.js";

export type { PartitionState } from "./kafka-raw-requests.js";
export { REAL_KAFKA_LIBS } from "./real-kafka-setup.js";

export type ScramMechanism = "SCRAM-SHA-256" | "SCRAM-SHA-512";

export interface ScramUser {
  readonly mechanism: ScramMechanism;
  readonly username: string;
  readonly password: string;
}

export interface RealKafkaOptions {
  /** Combined broker+controller nodes, ids 1..N; 1 or 3 (3 for RF 3 / min.isr 2). @default 1 */
  readonly brokers?: number;
  /** auto.create.topics.enable (Kafka's default is true). @default false */
  readonly autoCreateTopics?: boolean;
  /** transaction.max.timeout.ms, the cap on a producer's transaction.timeout.ms. @default Kafka's 900000 */
  readonly transactionMaxTimeoutMs?: number;
  /** An SSL listener with mutual TLS (ssl.client.auth=required) using these certificates. */
  readonly tls?: TestPki;
  /** A SASL_SSL listener (SCRAM-SHA-256 and -512, server-only TLS) with these users; needs `tls`. */
  readonly scramUsers?: readonly ScramUser[];
  /** Extra server.properties entries, applied last. */
  readonly serverProperties?: Readonly<Record<string, string>>;
  /** -XX:TieredStopAtLevel=1 (C1 only): quicker start, slower steady state. Off for benchmarks. @default true */
  readonly quickJit?: boolean;
  /** Each JVM's -Xmx. @default "512m" */
  readonly heap?: string;
  /** @default 90000 */
  readonly startTimeoutMs?: number;
}

export interface RealKafkaBootstrap {
  readonly plaintext: string[];
  /** Mutual TLS; present with `tls`. */
  readonly ssl?: string[];
  /** SCRAM over TLS; present with `scramUsers`. */
  readonly saslSsl?: string[];
}

export interface RealKafka {
  /** PLAINTEXT listeners, as MockKafka's. */
  readonly bootstrapServers: string[];
  readonly bootstrap: RealKafkaBootstrap;
  readonly brokerIds: readonly number[];
  /** The temporary folder holding every node's config, logs and data; gone after stop(). */
  readonly dataDir: string;
  /** The JVM's pid while the broker runs. */
  pid(brokerId: number): number | undefined;
  /** Replication factor defaults to min(3, brokers); resolves once every partition's leader serves it. */
  createTopic(
    name: string,
    partitions: number,
    replicationFactor?: number,
    configs?: Readonly<Record<string, string>>,
  ): Promise<void>;
  /** Resolves once no running broker lists the topic any more. */
  deleteTopic(name: string): Promise<void>;
  /** SIGKILL; resolves once the JVM is gone. Its data stays for restartBroker. */
  killBroker(brokerId: number): Promise<void>;
  /** SIGSTOP: connections stay open and nothing answers, as in a long GC pause or a hung host. */
  freezeBroker(brokerId: number): void;
  thawBroker(brokerId: number): void;
  /** Starts a killed broker again on its ports and data; resolves once it serves Metadata. */
  restartBroker(brokerId: number): Promise<void>;
  /** The newest state any answering broker knows (highest leader epoch). */
  partitionState(topic: string, partition: number): Promise<PartitionState>;
  /** -1 while the partition has no leader. */
  leaderOf(topic: string, partition: number): Promise<number>;
  /** Preferred-replica election for every partition of `topic`, or of the cluster. */
  electPreferredLeaders(topic?: string): Promise<void>;
  /**
   * ElectLeaders UNCLEAN for a partition whose in-sync replicas are all gone: a live replica out of
   * the ISR leads with its own, shorter log (what only the ISR had is lost), at a new leader epoch.
   * Resolves once a broker leads it.
   */
  uncleanElection(topic: string, partition: number): Promise<void>;
  /**
   * Makes `brokerId` (an in-sync replica) the leader: reorders the replicas so it comes first
   * (AlterPartitionReassignments, no data moves) and runs a preferred election. Bumps the epoch.
   */
  moveLeader(topic: string, partition: number, brokerId: number): Promise<void>;
  /** Kills every JVM, removes dataDir. Idempotent; resolves once all are gone. */
  stop(): Promise<void>;
}

/** ELECTION_NOT_NEEDED: the preferred replica already leads. */
const ELECTION_NOT_NEEDED = 84;
/** A broker that has not yet heard of the topic. */
const UNKNOWN_TOPIC_OR_PARTITION = 3;

class RealKafkaCluster implements RealKafka {
  readonly bootstrapServers: string[];
  readonly bootstrap: RealKafkaBootstrap;
  readonly brokerIds: readonly number[];
  readonly dataDir: string;
  readonly #nodes: ReadonlyMap<number, KafkaNode>;
  readonly #admin: Admin;
  /** The last deleteTopic's turn: deletes are made one after the other (deleteTopic). */
  #deletes: Promise<unknown> = Promise.resolve();
  #stopping: Promise<void> | undefined;

  constructor(nodes: KafkaNode[], bootstrap: RealKafkaBootstrap, dataDir: string) {
    this.#nodes = new Map(nodes.map((n) => [n.id, n]));
    this.brokerIds = nodes.map((n) => n.id);
    this.bootstrap = bootstrap;
    this.bootstrapServers = bootstrap.plaintext;
    this.dataDir = dataDir;
    // Retries outlast a killed broker's fencing (broker.session.timeout.ms) plus a re-election.
    this.#admin = new Kafka({
      clientId: "real-kafka-testbed",
      brokers: bootstrap.plaintext,
      logLevel: logLevel.NOTHING,
      retry: { retries: 10, initialRetryTime: 200, maxRetryTime: 2000 },
    }).admin();
  }

  async connect(): Promise<void> {
    await this.#admin.connect();
  }

  pid(brokerId: number): number | undefined {
    return this.#node(brokerId).pid;
  }

  async createTopic(
    name: string,
    partitions: number,
    replicationFactor?: number,
    configs: Readonly<Record<string, string>> = {},
  ): Promise<void> {
    const configEntries = Object.entries(configs).map(([name, value]) => ({ name, value }));
    const topic = {
      topic: name,
      numPartitions: partitions,
      replicationFactor: replicationFactor ?? Math.min(3, this.brokerIds.length),
      configEntries,
    };
    const created = await this.#admin.createTopics({ topics: [topic], waitForLeaders: false });
    if (!created) throw new Error(`createTopic ${name}: TOPIC_ALREADY_EXISTS`);
    // Not kafkajs's waitForLeaders: it retries only LEADER_NOT_AVAILABLE, and a broker that has
    // not yet read the topic from the metadata log answers UNKNOWN_TOPIC_OR_PARTITION (seen on a
    // 1-broker cluster at load 8), which failed the call after the topic had been created.
    await waitFor(`leaders for every partition of ${name}`, 30_000, [], async () => {
      const states = await Promise.all(
        Array.from({ length: partitions }, (_, p) => this.partitionState(name, p)),
      );
      return states.every((s) => s.leader > 0);
    });
    // Metadata names a leader as soon as the controller chose one; the leader itself may not have
    // applied that record yet and answers UNKNOWN_TOPIC_OR_PARTITION (a producer that starts at
    // once then fails, once its few retries are spent). Ready when every leader answers ListOffsets.
    await waitFor(`the leaders of ${name} to serve it`, 30_000, [], async () => {
      await this.listOffsets(name);
      return true;
    });
  }

  /** ListOffsets through kafkajs: answered by each partition's leader. */
  async listOffsets(topic: string): Promise<void> {
    await this.#admin.fetchTopicOffsets(topic);
  }

  async deleteTopic(name: string): Promise<void> {
    // One delete at a time: kafkajs 2.2.4's admin refreshes the metadata of every topic it has
    // seen after a delete, so two deletes at once fail each other (UNKNOWN_TOPIC_OR_PARTITION for
    // the topic the other one deleted, retried until kafkajs gives up; the real bench's MM2 step
    // failed so, deleting its two target topics with Promise.all).
    const turn = this.#deletes.then(() => this.#admin.deleteTopics({ topics: [name] }));
    this.#deletes = turn.catch(() => undefined);
    await turn;
    // Each broker drops the topic when it reads the deletion from the metadata log; until then
    // its Metadata still names the old partitions and a new topic of the same name looks ready.
    await waitFor(`every broker to forget ${name}`, 30_000, [], async () => {
      const answering = [...this.#nodes.values()].filter((n) => n.answering);
      const answers = await Promise.all(answering.map((n) => metadata(n.spec.plaintext, [name])));
      return answers.every(
        (a) => (a.topics.get(name)?.errorCode ?? UNKNOWN_TOPIC_OR_PARTITION) === UNKNOWN_TOPIC_OR_PARTITION,
      );
    });
  }

  async killBroker(brokerId: number): Promise<void> {
    await this.#node(brokerId).kill();
  }

  freezeBroker(brokerId: number): void {
    this.#node(brokerId).freeze();
  }

  thawBroker(brokerId: number): void {
    this.#node(brokerId).thaw();
  }

  async restartBroker(brokerId: number): Promise<void> {
    const node = this.#node(brokerId);
    node.start();
    // Its own listener answers only once it has caught up with the metadata log and been
    // unfenced; until then a client would be sent to a broker that refuses to lead.
    await waitFor(`broker ${brokerId} to serve Metadata again`, 60_000, [node], async () => {
      const answer = await metadata(node.spec.plaintext, []);
      return answer.brokers.some((b) => b.nodeId === brokerId);
    });
  }

  async partitionState(topic: string, partition: number): Promise<PartitionState> {
    const answering = [...this.#nodes.values()].filter((n) => n.answering);
    const answers = await Promise.allSettled(answering.map((n) => metadata(n.spec.plaintext, [topic])));
    let newest: PartitionState | undefined;
    for (const answer of answers) {
      if (answer.status !== "fulfilled") continue;
      const state = answer.value.topics.get(topic)?.partitions.find((p) => p.partition === partition);
      if (!state || state.errorCode === UNKNOWN_TOPIC_OR_PARTITION) continue;
      // Brokers learn leader changes at different moments; the highest epoch is the latest.
      if (!newest || state.leaderEpoch > newest.leaderEpoch) newest = state;
    }
    if (!newest) throw new Error(`no answering broker knows ${topic}[${partition}]`);
    return newest;
  }

  async leaderOf(topic: string, partition: number): Promise<number> {
    return (await this.partitionState(topic, partition)).leader;
  }

  async electPreferredLeaders(topic?: string): Promise<void> {
    let partitions: { topic: string; partitions: number[] }[] | null = null;
    if (topic !== undefined) {
      const known = (await metadata(this.#anyAddress(), [topic])).topics.get(topic);
      if (known?.errorCode !== 0) throw new Error(`electPreferredLeaders: no topic ${topic}`);
      partitions = [{ topic, partitions: known.partitions.map((p) => p.partition) }];
    }
    const results = await electLeaders(this.#anyAddress(), ElectionType.preferred, partitions);
    const failed = results.filter((r) => r.errorCode !== 0 && r.errorCode !== ELECTION_NOT_NEEDED);
    if (failed.length > 0) {
      const what = failed.map((f) => `${f.topic}[${f.partition}]: ${f.errorCode} ${f.message ?? ""}`);
      throw new Error(`preferred leader election failed: ${what.join("; ")}`);
    }
  }

  async uncleanElection(topic: string, partition: number): Promise<void> {
    await waitFor(`an unclean leader for ${topic}[${partition}]`, 30_000, [], async () => {
      const [result] = await electLeaders(this.#anyAddress(), ElectionType.unclean, [
        { topic, partitions: [partition] },
      ]);
      if (result !== undefined && result.errorCode !== 0 && result.errorCode !== ELECTION_NOT_NEEDED) {
        throw new Error(
          `unclean election of ${topic}[${partition}]: ${result.errorCode} ${result.message ?? ""}`,
        );
      }
      // The dead leader stays in Metadata until the controller fences it: wait for a live one.
      const { leader } = await this.partitionState(topic, partition);
      return this.#nodes.get(leader)?.answering === true;
    });
  }

  async moveLeader(topic: string, partition: number, brokerId: number): Promise<void> {
    const before = await this.partitionState(topic, partition);
    if (before.leader === brokerId) return;
    if (!before.isr.includes(brokerId)) {
      throw new Error(`moveLeader: broker ${brokerId} is not in the ISR of ${topic}[${partition}]`);
    }
    const replicas = [brokerId, ...before.replicas.filter((r) => r !== brokerId)];
    await this.#admin.alterPartitionReassignments({
      topics: [{ topic, partitionAssignment: [{ partition, replicas }] }],
    });
    await waitFor(`${topic}[${partition}] replicas ${replicas}`, 30_000, [], async () => {
      return (await this.partitionState(topic, partition)).replicas[0] === brokerId;
    });
    await waitFor(`broker ${brokerId} to lead ${topic}[${partition}]`, 30_000, [], async () => {
      const results = await electLeaders(this.#anyAddress(), ElectionType.preferred, [
        { topic, partitions: [partition] },
      ]);
      if (results.some((r) => r.errorCode !== 0 && r.errorCode !== ELECTION_NOT_NEEDED)) return false;
      return (await this.partitionState(topic, partition)).leader === brokerId;
    });
  }

  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      await this.#admin.disconnect().catch(() => undefined);
      await stopNodes([...this.#nodes.values()], this.dataDir);
    })();
    return this.#stopping;
  }

  #node(brokerId: number): KafkaNode {
    const node = this.#nodes.get(brokerId);
    if (!node) throw new Error(`no broker ${brokerId} (brokers: ${this.brokerIds.join(", ")})`);
    return node;
  }

  #anyAddress(): string {
    const node = [...this.#nodes.values()].find((n) => n.answering);
    if (!node) throw new Error("no broker is running and unfrozen");
    return node.spec.plaintext;
  }
}

async function stopNodes(nodes: readonly KafkaNode[], dataDir: string): Promise<void> {
  await Promise.all(nodes.map((n) => n.kill()));
  rmSync(dataDir, { recursive: true, force: true });
}

/** Starts on new ports when a node could not bind one (allocatePorts says why it may happen). */
const START_ATTEMPTS = 3;

/** Spawns the nodes and resolves once the cluster has created and served a topic. */
export async function startRealKafka(opts: RealKafkaOptions = {}): Promise<RealKafka> {
  requireJars();
  checkOptions(opts.brokers ?? 1, opts.tls, opts.scramUsers ?? []);
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(opts);
    } catch (error) {
      if (attempt >= START_ATTEMPTS || !/Address already in use/.test(String(error))) throw error;
    }
  }
}

async function startOnce(opts: RealKafkaOptions): Promise<RealKafka> {
  const brokers = opts.brokers ?? 1;
  const scramUsers = opts.scramUsers ?? [];
  const dataDir = mkdtempSync(join(tmpdir(), "kafka-mirror-real-kafka-"));
  let nodes: KafkaNode[] = [];
  try {
    const scram = scramUsers.length > 0;
    const ports = await allocatePorts(brokers, { ssl: opts.tls !== undefined, saslSsl: scram });
    const tls = opts.tls ? writeKeystore(dataDir, opts.tls) : undefined;
    nodes = layOutNodes({
      dataDir,
      ports,
      autoCreateTopics: opts.autoCreateTopics ?? false,
      ...(opts.transactionMaxTimeoutMs === undefined
        ? {}
        : { transactionMaxTimeoutMs: opts.transactionMaxTimeoutMs }),
      ...(tls ? { tls } : {}),
      scram,
      extra: opts.serverProperties ?? {},
      heap: opts.heap ?? "512m",
      quickJit: opts.quickJit ?? true,
    });
    const clusterId = newClusterId();
    const scramCredentials = scramUsers.map(
      (u) => `${u.mechanism}=[name=${u.username},password=${u.password}]`,
    );
    // In parallel: each format is a JVM start, most of the time before a broker can run.
    await Promise.all(
      nodes.map((n) =>
        formatStorage({
          jvmArgs: n.spec.jvmArgs,
          propertiesPath: n.spec.propertiesPath,
          clusterId,
          scramCredentials,
        }),
      ),
    );
    for (const node of nodes) node.start();
    const list = (key: "ssl" | "saslSsl"): string[] => ports.map((p) => `127.0.0.1:${p[key]}`);
    const cluster = new RealKafkaCluster(
      nodes,
      {
        plaintext: nodes.map((n) => n.spec.plaintext),
        ...(opts.tls ? { ssl: list("ssl") } : {}),
        ...(scram ? { saslSsl: list("saslSsl") } : {}),
      },
      dataDir,
    );
    await waitUntilReady(cluster, nodes, opts.startTimeoutMs ?? 90_000);
    return cluster;
  } catch (error) {
    await stopNodes(nodes, dataDir);
    throw error;
  }
}

function checkOptions(brokers: number, tls: TestPki | undefined, scramUsers: readonly ScramUser[]): void {
  const problems: string[] = [];
  if (!Number.isInteger(brokers) || brokers < 1)
    problems.push(`brokers must be a positive integer, got ${brokers}`);
  if (scramUsers.length > 0 && !tls)
    problems.push("scramUsers need tls: the SASL_SSL listener uses its certificates");
  for (const user of scramUsers) {
    // kafka-storage parses `[name=...,password=...]` itself: keep values clear of its delimiters.
    if (!/^[\w.@-]+$/.test(user.username) || !/^[\w.@-]+$/.test(user.password)) {
      problems.push(
        `SCRAM user ${JSON.stringify(user.username)}: name and password may hold only [A-Za-z0-9_.@-]`,
      );
    }
  }
  if (problems.length > 0) throw new Error(`startRealKafka: ${problems.join("; ")}`);
}

/** Kafka's PEM keystore is one file: the private key, then the certificate chain. */
function writeKeystore(dataDir: string, pki: TestPki): NodeTls {
  const dir = join(dataDir, "tls");
  mkdirSync(dir);
  const keystorePath = join(dir, "server-keystore.pem");
  writeFileSync(keystorePath, `${pki.serverKey.pem.trim()}\n${pki.serverCert.pem.trim()}\n`, { mode: 0o600 });
  return { keystorePath, truststorePath: pki.ca.path };
}

/**
 * Ready means: every node serves Metadata listing every broker (a node opens its client listener
 * only once unfenced), and a topic replicated to all of them is created and its leader answers
 * ListOffsets. The probe topic is deleted again, so tests see only their own topics.
 */
async function waitUntilReady(
  cluster: RealKafkaCluster,
  nodes: readonly KafkaNode[],
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const left = (): number => Math.max(1, deadline - Date.now());
  await waitFor(`all ${nodes.length} brokers in Metadata`, left(), nodes, async () => {
    const answers = await Promise.all(nodes.map((n) => metadata(n.spec.plaintext, [])));
    return answers.every((a) => a.brokers.length === nodes.length);
  });
  await cluster.connect();
  const probe = `real-kafka-ready-${newClusterId().replace(/[^A-Za-z0-9]/g, "")}`;
  await cluster.createTopic(probe, 1, nodes.length);
  await waitFor(`a leader for ${probe}`, left(), nodes, async () => (await cluster.leaderOf(probe, 0)) > 0);
  await cluster.listOffsets(probe);
  await cluster.deleteTopic(probe);
}
