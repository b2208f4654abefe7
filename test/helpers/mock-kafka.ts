// Starts librdkafka's mock Kafka cluster (our launcher, built by `npm run setup:testbed`) as a
// child process and drives its fault injection over stdin. The launcher exits when its stdin
// closes, so even a test process that dies without calling stop() leaves no brokers behind.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { createInterface, type Interface } from "node:readline";
import { fileURLToPath } from "node:url";

/**
 * The launcher binary; KAFKA_MIRROR_MOCK_KAFKA_BIN points at another build of it: one with a
 * launcher change built into a directory of one's own, or the build without our transaction
 * patch (.testbed/unpatched-txn/bin/mock-kafka) to see a test bed test fail against upstream's mock.
 */
export const MOCK_KAFKA_BINARY =
  process.env.KAFKA_MIRROR_MOCK_KAFKA_BIN ||
  join(dirname(fileURLToPath(import.meta.url)), "..", "..", ".testbed", "bin", "mock-kafka");

const START_TIMEOUT_MS = 10_000;
const COMMAND_TIMEOUT_MS = 10_000;

export interface MockKafkaOptions {
  /** @default 3 (broker ids 1..N) */
  readonly brokers?: number;
  /** Log bytes each partition keeps before dropping its oldest batches. @default 4 GiB */
  readonly partitionMaxBytes?: number;
  /** Imitate auto.create.topics.enable=false: Metadata never creates topics. @default false */
  readonly disableAutoCreateTopics?: boolean;
  /**
   * Answer a Fetch held for its MaxWait as soon as its broker's log changes, as Kafka does
   * (MOCK_KAFKA_FETCH_WAKEUP=1, testbed/mock-kafka/patch-fetch-wakeup.pl). Off: upstream's mock,
   * which holds an empty answer for the whole MaxWait. @default true, false when this process's
   * environment has MOCK_KAFKA_FETCH_WAKEUP=0
   */
  readonly fetchWakeup?: boolean;
}

export interface InjectedError {
  /** Kafka error code (e.g. 6 NOT_LEADER_OR_FOLLOWER); librdkafka's -195 drops the connection. */
  readonly code: number;
  /** Delay before the broker answers with this error. */
  readonly rttMs: number;
}

export interface MockKafka {
  readonly bootstrapServers: string[];
  /** The launcher's process id, so a test can check it is gone. */
  readonly pid: number;
  /** Replication factor defaults to min(3, brokers). */
  createTopic(name: string, partitions: number, replicationFactor?: number): Promise<void>;
  deleteTopic(name: string): Promise<void>;
  brokerDown(id: number): Promise<void>;
  brokerUp(id: number): Promise<void>;
  /** Beware: the mock creates an unknown topic here instead of failing. brokerId -1: no leader. */
  setLeader(topic: string, partition: number, brokerId: number): Promise<void>;
  /** Errors answered to the next requests with this API key, one per request, on any broker. */
  pushRequestErrors(apiKey: number, codes: readonly number[]): Promise<void>;
  pushBrokerRequestErrors(brokerId: number, apiKey: number, errors: readonly InjectedError[]): Promise<void>;
  /** Injected errors still queued on one broker for one API key. */
  brokerErrorCount(brokerId: number, apiKey: number): Promise<number>;
  clearRequestErrors(apiKey: number): Promise<void>;
  setRtt(brokerId: number, ms: number): Promise<void>;
  setCoordinator(type: "group" | "transaction", key: string, brokerId: number): Promise<void>;
  /**
   * Metadata and FindCoordinator name `host:port` for this broker from now on (a TLS terminator
   * or proxy in front of it); the broker keeps listening where it did.
   */
  advertise(brokerId: number, host: string, port: number): Promise<void>;
  /** Where the broker really listens (`host:port`), whatever it advertises. */
  listener(brokerId: number): Promise<string>;
  /** Any launcher command line (see testbed/mock-kafka/launcher.c); resolves with the text after OK. */
  command(line: string): Promise<string>;
  /** Idempotent; resolves once the process has exited. */
  stop(): Promise<void>;
}

/** Kafka API keys the fault-injection calls take. */
export const ApiKey = {
  Produce: 0,
  Fetch: 1,
  ListOffsets: 2,
  Metadata: 3,
  OffsetCommit: 8,
  OffsetFetch: 9,
  FindCoordinator: 10,
  JoinGroup: 11,
  Heartbeat: 12,
  SyncGroup: 14,
  ApiVersions: 18,
  CreateTopics: 19,
  InitProducerId: 22,
  AddPartitionsToTxn: 24,
  EndTxn: 26,
} as const;

interface Pending {
  resolve(value: string): void;
  reject(error: Error): void;
}

class MockKafkaProcess implements MockKafka {
  readonly bootstrapServers: string[];
  readonly pid: number;
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #lines: Interface;
  readonly #exited: Promise<void>;
  readonly #waiting: Pending[] = [];
  #queue: Promise<unknown> = Promise.resolve();
  #stopped = false;
  #stderrTail = "";

  constructor(
    child: ChildProcessWithoutNullStreams,
    lines: Interface,
    exited: Promise<void>,
    bootstrapServers: string[],
  ) {
    this.#child = child;
    this.#lines = lines;
    this.#exited = exited;
    this.bootstrapServers = bootstrapServers;
    this.pid = child.pid ?? -1;
    lines.on("line", (line) => this.#onLine(line));
    // Writing to a launcher that just died raises EPIPE here; the exit handler reports it instead.
    child.stdin.on("error", () => undefined);
    child.stderr.on("data", (chunk: Buffer) => {
      this.#stderrTail = (this.#stderrTail + chunk.toString("utf8")).slice(-2000);
    });
    void exited.then(() => this.#failAll(new Error(`mock-kafka exited${this.#describeStderr()}`)));
  }

  createTopic(name: string, partitions: number, replicationFactor?: number): Promise<void> {
    const rf = replicationFactor === undefined ? "" : ` ${int(replicationFactor)}`;
    return this.#ok(`create-topic ${word(name)} ${int(partitions)}${rf}`);
  }

  deleteTopic(name: string): Promise<void> {
    return this.#ok(`delete-topic ${word(name)}`);
  }

  brokerDown(id: number): Promise<void> {
    return this.#ok(`broker-down ${int(id)}`);
  }

  brokerUp(id: number): Promise<void> {
    return this.#ok(`broker-up ${int(id)}`);
  }

  setLeader(topic: string, partition: number, brokerId: number): Promise<void> {
    return this.#ok(`set-leader ${word(topic)} ${int(partition)} ${int(brokerId)}`);
  }

  pushRequestErrors(apiKey: number, codes: readonly number[]): Promise<void> {
    if (codes.length === 0) return Promise.resolve();
    return this.#ok(`push-errors ${int(apiKey)} ${codes.map(int).join(" ")}`);
  }

  pushBrokerRequestErrors(brokerId: number, apiKey: number, errors: readonly InjectedError[]): Promise<void> {
    if (errors.length === 0) return Promise.resolve();
    const pairs = errors.map((e) => `${int(e.code)}:${int(e.rttMs)}`).join(" ");
    return this.#ok(`push-broker-errors ${int(brokerId)} ${int(apiKey)} ${pairs}`);
  }

  async brokerErrorCount(brokerId: number, apiKey: number): Promise<number> {
    return Number(await this.command(`broker-error-count ${int(brokerId)} ${int(apiKey)}`));
  }

  clearRequestErrors(apiKey: number): Promise<void> {
    return this.#ok(`clear-errors ${int(apiKey)}`);
  }

  setRtt(brokerId: number, ms: number): Promise<void> {
    return this.#ok(`broker-rtt ${int(brokerId)} ${int(ms)}`);
  }

  setCoordinator(type: "group" | "transaction", key: string, brokerId: number): Promise<void> {
    return this.#ok(`coordinator ${type} ${word(key)} ${int(brokerId)}`);
  }

  advertise(brokerId: number, host: string, port: number): Promise<void> {
    return this.#ok(`advertise ${int(brokerId)} ${word(host)} ${int(port)}`);
  }

  listener(brokerId: number): Promise<string> {
    return this.command(`listener ${int(brokerId)}`);
  }

  command(line: string): Promise<string> {
    if (/[\r\n]/.test(line)) return Promise.reject(new Error("mock-kafka commands are single lines"));
    // One command at a time: the launcher answers in order, and a failed command must not
    // desynchronise the answers of those queued behind it.
    const run = this.#queue.then(() => this.#send(line));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async stop(): Promise<void> {
    if (!this.#stopped) {
      this.#stopped = true;
      this.#child.stdin.end();
      const killer = setTimeout(() => this.#child.kill("SIGKILL"), 3000);
      try {
        await this.#exited;
      } finally {
        clearTimeout(killer);
        this.#lines.close();
      }
    }
    await this.#exited;
  }

  async #ok(line: string): Promise<void> {
    await this.command(line);
  }

  #send(line: string): Promise<string> {
    if (this.#stopped || this.#child.exitCode !== null || this.#child.signalCode !== null) {
      return Promise.reject(new Error(`mock-kafka is not running (command: ${line})`));
    }
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`mock-kafka did not answer "${line}" within ${COMMAND_TIMEOUT_MS} ms`));
        // The answer may still come; the process is no longer in step with us.
        void this.stop();
      }, COMMAND_TIMEOUT_MS);
      this.#waiting.push({
        resolve: (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(new Error(`mock-kafka "${line}": ${error.message}`));
        },
      });
      this.#child.stdin.write(`${line}\n`);
    });
  }

  #onLine(line: string): void {
    const waiter = this.#waiting.shift();
    if (!waiter) return;
    if (line === "OK" || line.startsWith("OK ")) waiter.resolve(line.slice(3));
    else if (line.startsWith("ERR ")) waiter.reject(new Error(line.slice(4)));
    else waiter.reject(new Error(`unexpected answer: ${line}`));
  }

  #failAll(error: Error): void {
    for (const waiter of this.#waiting.splice(0)) waiter.reject(error);
  }

  #describeStderr(): string {
    const tail = this.#stderrTail.trim();
    return tail ? `; stderr: ${tail}` : "";
  }
}

/** Spawns a mock cluster and resolves once it prints READY. */
export async function startMockKafka(opts: MockKafkaOptions = {}): Promise<MockKafka> {
  if (!existsSync(MOCK_KAFKA_BINARY)) {
    throw new Error(
      `${MOCK_KAFKA_BINARY} is missing: run \`npm run setup:testbed\` to build the mock Kafka cluster`,
    );
  }
  const args = ["--brokers", String(int(opts.brokers ?? 3))];
  if (opts.disableAutoCreateTopics) args.push("--no-auto-create-topics");
  // Unless told, MOCK_KAFKA_FETCH_WAKEUP=0 in the caller's environment turns it off for a whole run.
  const wakeup = opts.fetchWakeup ?? process.env.MOCK_KAFKA_FETCH_WAKEUP !== "0";
  const env: NodeJS.ProcessEnv = { ...process.env, MOCK_KAFKA_FETCH_WAKEUP: wakeup ? "1" : "0" };
  if (opts.partitionMaxBytes !== undefined) {
    env.MOCK_KAFKA_PARTITION_MAX_BYTES = String(int(opts.partitionMaxBytes));
  }
  const child = spawn(MOCK_KAFKA_BINARY, args, { env, stdio: ["pipe", "pipe", "pipe"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const lines = createInterface({ input: child.stdout });

  let stderr = "";
  const onStderr = (chunk: Buffer): void => {
    stderr = (stderr + chunk.toString("utf8")).slice(-2000);
  };
  child.stderr.on("data", onStderr);

  try {
    const bootstrap = await new Promise<string[]>((resolve, reject) => {
      let servers: string[] | undefined;
      const fail = (why: string): void => {
        cleanup();
        reject(new Error(`mock-kafka failed to start: ${why}${stderr ? `; stderr: ${stderr.trim()}` : ""}`));
      };
      const onLine = (line: string): void => {
        if (line.startsWith("BOOTSTRAP ")) {
          servers = line.slice("BOOTSTRAP ".length).split(",").filter(Boolean);
        } else if (line === "READY") {
          cleanup();
          if (servers && servers.length > 0) resolve(servers);
          else reject(new Error("mock-kafka printed READY without a BOOTSTRAP line"));
        } else {
          fail(`unexpected output ${JSON.stringify(line)}`);
        }
      };
      const onExit = (): void => fail("process exited");
      const onError = (error: Error): void => fail(error.message);
      const timer = setTimeout(() => fail(`no READY within ${START_TIMEOUT_MS} ms`), START_TIMEOUT_MS);
      const cleanup = (): void => {
        clearTimeout(timer);
        lines.off("line", onLine);
        child.off("exit", onExit);
        child.off("error", onError);
      };
      lines.on("line", onLine);
      child.once("exit", onExit);
      child.once("error", onError);
    });
    child.stderr.off("data", onStderr);
    return new MockKafkaProcess(child, lines, exited, bootstrap);
  } catch (error) {
    child.kill("SIGKILL");
    lines.close();
    throw error;
  }
}

function int(n: number): number {
  if (!Number.isSafeInteger(n)) throw new Error(`expected an integer, got ${n}`);
  return n;
}

function word(s: string): string {
  if (s.length === 0 || /\s/.test(s))
    throw new Error(`mock-kafka names cannot be empty or hold spaces: ${JSON.stringify(s)}`);
  return s;
}
