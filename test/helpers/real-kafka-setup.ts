// The pieces real-kafka.ts starts a cluster with: where the jars are, free ports for every
// listener, each node's folder and files, and polling until the cluster answers.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { canListen } from "./net.js";
import { jvmArguments, type NodePorts, type NodeTls, serverProperties } from "./real-kafka-config.js";
import { KafkaNode } from "./real-kafka-node.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The broker's classpath folder; KAFKA_MIRROR_REAL_KAFKA_LIBS points at another fetch of it. */
export const REAL_KAFKA_LIBS =
  process.env.KAFKA_MIRROR_REAL_KAFKA_LIBS || join(ROOT, ".testbed", "kafka", "libs");
export const REAL_KAFKA_LOG4J = join(ROOT, "testbed", "kafka", "log4j2.properties");

export function requireJars(): void {
  const present =
    existsSync(REAL_KAFKA_LIBS) && readdirSync(REAL_KAFKA_LIBS).some((f) => f.startsWith("kafka_2.13-"));
  if (!present) {
    throw new Error(`${REAL_KAFKA_LIBS} has no Kafka jars: run \`npm run setup:testbed\` to fetch them`);
  }
}

export interface ListenerChoice {
  readonly ssl: boolean;
  readonly saslSsl: boolean;
}

/**
 * Distinct free ports for every node's listeners; the controller ports must be known before
 * formatting. Below the kernel's ephemeral range: a port from it (bound to 0, then closed) may be
 * taken, in the seconds before the broker's JVM binds it, as the local port of any outgoing
 * connection on the machine (the CI's mock lane runs beside this one), and the broker then exits
 * with "Address already in use" (seen in CI). Chosen at random, so that clusters started at once
 * by other processes rarely pick the same; startRealKafka starts again on new ports if one does.
 */
export async function allocatePorts(nodes: number, listeners: ListenerChoice): Promise<NodePorts[]> {
  const taken = new Set<number>();
  const [low] = ephemeralPorts();
  const next = async (): Promise<number> => {
    for (let tries = 0; tries < 1_000; tries++) {
      const port = LOWEST_PORT + Math.floor(Math.random() * (low - LOWEST_PORT));
      if (!taken.has(port) && (await canListen(port))) {
        taken.add(port);
        return port;
      }
    }
    throw new Error(`no free port in ${LOWEST_PORT}..${low - 1} after 1,000 tries`);
  };
  const all: NodePorts[] = [];
  for (let i = 0; i < nodes; i++) {
    all.push({
      plaintext: await next(),
      controller: await next(),
      ...(listeners.ssl ? { ssl: await next() } : {}),
      ...(listeners.saslSsl ? { saslSsl: await next() } : {}),
    });
  }
  return all;
}

/** Well above the registered services a machine may run, below the ephemeral range. */
const LOWEST_PORT = 10_000;

/** The kernel's ephemeral port range (Linux's default where it cannot be read). */
export function ephemeralPorts(): [number, number] {
  try {
    const [low, high] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/);
    const range: [number, number] = [Number(low), Number(high)];
    if (range.every(Number.isInteger) && range[0] > LOWEST_PORT + 1_000) return range;
  } catch {
    // not Linux: its default below
  }
  return [32_768, 60_999];
}

export interface ClusterLayout {
  readonly dataDir: string;
  readonly ports: readonly NodePorts[];
  readonly autoCreateTopics: boolean;
  readonly transactionMaxTimeoutMs?: number;
  readonly tls?: NodeTls;
  readonly scram: boolean;
  readonly extra: Readonly<Record<string, string>>;
  readonly heap: string;
  readonly quickJit: boolean;
}

/** Writes each node's folder and server.properties; nothing runs yet. */
export function layOutNodes(layout: ClusterLayout): KafkaNode[] {
  const voters = layout.ports.map((p, i) => `${i + 1}@127.0.0.1:${p.controller}`).join(",");
  return layout.ports.map((ports, i) => {
    const id = i + 1;
    const dir = join(layout.dataDir, `node-${id}`);
    mkdirSync(dir, { recursive: true });
    const propertiesPath = join(dir, "server.properties");
    const properties = serverProperties({
      nodeId: id,
      voters,
      clusterSize: layout.ports.length,
      ports,
      logDir: join(dir, "data"),
      autoCreateTopics: layout.autoCreateTopics,
      ...(layout.transactionMaxTimeoutMs === undefined
        ? {}
        : { transactionMaxTimeoutMs: layout.transactionMaxTimeoutMs }),
      ...(layout.tls ? { tls: layout.tls } : {}),
      scram: layout.scram,
      extra: layout.extra,
    });
    writeFileSync(propertiesPath, properties);
    const jvmArgs = jvmArguments({
      heap: layout.heap,
      quickJit: layout.quickJit,
      logsDir: dir,
      log4jConfig: REAL_KAFKA_LOG4J,
      classpath: join(REAL_KAFKA_LIBS, "*"),
    });
    return new KafkaNode({ id, dir, propertiesPath, jvmArgs, plaintext: `127.0.0.1:${ports.plaintext}` });
  });
}

const POLL_MS = 200;

/**
 * Polls `check` until it resolves true; a rejection counts as "not yet". Fails early, with the
 * node's logs, when one of `watched` exits.
 */
export async function waitFor(
  what: string,
  timeoutMs: number,
  watched: readonly KafkaNode[],
  check: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError = "";
  for (;;) {
    const dead = watched.find((n) => !n.running);
    if (dead) throw new Error(`broker ${dead.id} exited while waiting for ${what}\n${dead.logTail()}`);
    try {
      if (await check()) return;
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
    }
    if (Date.now() > deadline) {
      const logs = watched.map((n) => n.logTail()).join("\n");
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${lastError ? ` (${lastError})` : ""}\n${logs}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
