/**
 * `kcat -G` (Debian's kcat 1.7.1 on librdkafka 2.0.2) as a real consumer-group member: a
 * librdkafka high-level consumer that joins the group through the coordinator, consumes what it is
 * assigned, commits (auto-commit, and once more when it closes) and leaves the group on SIGTERM.
 * It shares no code with kafkajs or our adapter, so what the group committed and where it starts
 * again are librdkafka's own doing.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createInterface } from "node:readline";
import { KCAT, kcatProduce } from "./kcat.js";

export interface KcatGroupOptions {
  readonly brokers: readonly string[];
  readonly groupId: string;
  readonly topics: readonly string[];
  /** Extra librdkafka properties (-X name=value). */
  readonly config?: Readonly<Record<string, string>>;
}

export interface Consumed {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly value: string;
}

export interface KcatGroupMember {
  /** Every record consumed so far, in arrival order. */
  readonly consumed: readonly Consumed[];
  /** Resolves once `count` records have been consumed in all (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  /** SIGTERM: kcat commits what it consumed, leaves the group and exits. Idempotent. */
  stop(): Promise<void>;
}

/** Starts a member; records are printed as `topic partition offset value` (values are ASCII in these tests). */
export function startKcatGroupMember(opts: KcatGroupOptions): KcatGroupMember {
  const config: Record<string, string> = {
    "auto.offset.reset": "earliest",
    "auto.commit.interval.ms": "200",
    "session.timeout.ms": "45000",
    ...opts.config,
  };
  // -u: unbuffered output, so a record is seen when kcat has it.
  const args = ["-b", opts.brokers.join(","), "-G", opts.groupId, "-q", "-u", "-f", "%t %p %o %s\\n"];
  for (const [name, value] of Object.entries(config)) args.push("-X", `${name}=${value}`);
  args.push(...opts.topics);
  return new Member(spawn(KCAT, args, { stdio: ["pipe", "pipe", "pipe"] }));
}

class Member implements KcatGroupMember {
  readonly consumed: Consumed[] = [];
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #exited: Promise<void>;
  readonly #waiters: { count: number; resolve: () => void }[] = [];
  #stderr = "";

  constructor(child: ChildProcessWithoutNullStreams) {
    this.#child = child;
    this.#exited = new Promise((resolve) => child.once("exit", () => resolve()));
    child.stderr.on("data", (chunk: Buffer) => {
      this.#stderr = (this.#stderr + chunk.toString("utf8")).slice(-4000);
    });
    createInterface({ input: child.stdout }).on("line", (line) => this.#onLine(line));
  }

  waitFor(count: number, timeoutMs = 30_000): Promise<void> {
    if (this.consumed.length >= count) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(
          new Error(`kcat -G consumed ${this.consumed.length} of ${count} records; stderr: ${this.#stderr}`),
        );
      }, timeoutMs);
      this.#waiters.push({
        count,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  async stop(): Promise<void> {
    if (this.#child.exitCode === null && this.#child.signalCode === null) this.#child.kill("SIGTERM");
    const killer = setTimeout(() => this.#child.kill("SIGKILL"), 15_000);
    await this.#exited;
    clearTimeout(killer);
  }

  #onLine(line: string): void {
    const [topic, partition, offset, ...value] = line.split(" ");
    if (topic === undefined || partition === undefined || offset === undefined) return;
    this.consumed.push({
      topic,
      partition: Number(partition),
      offset: Number(offset),
      value: value.join(" "),
    });
    for (const w of this.#waiters.filter((x) => this.consumed.length >= x.count)) {
      this.#waiters.splice(this.#waiters.indexOf(w), 1);
      w.resolve();
    }
  }
}

/** A new topic of `partitions` partitions holding `perPartition` records valued `p<partition>-<i>` each (kcat-written). */
export async function kcatFilledTopic(
  kafka: {
    readonly bootstrapServers: string[];
    createTopic(name: string, partitions: number): Promise<void>;
  },
  prefix: string,
  partitions: number,
  perPartition: number,
): Promise<string> {
  const topic = `${prefix}-${randomUUID()}`;
  await kafka.createTopic(topic, partitions);
  for (let partition = 0; partition < partitions; partition++) {
    const records = Array.from({ length: perPartition }, (_, i) => ({
      key: null,
      value: Buffer.from(`p${partition}-${i}`),
    }));
    await kcatProduce({ brokers: kafka.bootstrapServers, topic, partition, records });
  }
  return topic;
}

/** The members a test started, to stop them all at its end. */
export class KcatGroupMembers {
  readonly #brokers: readonly string[];
  readonly #members: KcatGroupMember[] = [];

  constructor(brokers: readonly string[]) {
    this.#brokers = brokers;
  }

  start(groupId: string, topic: string): KcatGroupMember {
    const m = startKcatGroupMember({ brokers: this.#brokers, groupId, topics: [topic] });
    this.#members.push(m);
    return m;
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.#members.splice(0).map((m) => m.stop()));
  }
}
