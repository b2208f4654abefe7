/**
 * A consumer-group member of either rebalance protocol (.testbed/bin/group-member,
 * testbed/group-member/): librdkafka 2.15.1's high-level consumer with `group.protocol=consumer`
 * (KIP-848, Kafka 4's default for new consumers) or `classic`. Debian's kcat (kcat-group.ts) is
 * librdkafka 2.0.2, classic only. It shares no code with kafkajs or our adapter, so the group the
 * coordinator holds, and where the member starts reading, are librdkafka's and Kafka's doing.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { MOCK_KAFKA_BINARY } from "./mock-kafka.js";

export const GROUP_MEMBER = join(dirname(MOCK_KAFKA_BINARY), "group-member");

export type GroupProtocol = "consumer" | "classic";

export interface MemberRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly value: string;
}

export interface GroupMember {
  readonly protocol: GroupProtocol;
  /** Every record read so far, in arrival order (values are ASCII in these tests). */
  readonly records: readonly MemberRecord[];
  /** Resolves once the member holds at least one partition (after its first rebalance). */
  assigned(timeoutMs?: number): Promise<void>;
  /** Resolves once `count` records have been read in all. */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  /** SIGTERM: the member commits what it read, leaves the group and exits. Idempotent. */
  stop(): Promise<void>;
}

export function startGroupMember(opts: {
  readonly brokers: readonly string[];
  readonly groupId: string;
  readonly protocol: GroupProtocol;
  readonly topics: readonly string[];
}): GroupMember {
  const child = spawn(GROUP_MEMBER, [opts.brokers.join(","), opts.groupId, opts.protocol, ...opts.topics], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  return new Member(child, opts.protocol);
}

class Member implements GroupMember {
  readonly records: MemberRecord[] = [];
  readonly protocol: GroupProtocol;
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #exited: Promise<void>;
  #assignedCount = 0;
  #output = "";
  readonly #checks = new Set<() => void>();

  constructor(child: ChildProcessWithoutNullStreams, protocol: GroupProtocol) {
    this.#child = child;
    this.protocol = protocol;
    this.#exited = new Promise((resolve) => child.once("exit", () => resolve()));
    child.stderr.on("data", (chunk: Buffer) => this.#note(chunk.toString("utf8")));
    createInterface({ input: child.stdout }).on("line", (line) => this.#onLine(line));
  }

  assigned(timeoutMs = 60_000): Promise<void> {
    return this.#until("a partition assigned", () => this.#assignedCount > 0, timeoutMs);
  }

  waitFor(count: number, timeoutMs = 60_000): Promise<void> {
    return this.#until(`${count} records`, () => this.records.length >= count, timeoutMs);
  }

  async stop(): Promise<void> {
    if (this.#child.exitCode === null && this.#child.signalCode === null) this.#child.kill("SIGTERM");
    const killer = setTimeout(() => this.#child.kill("SIGKILL"), 20_000);
    await this.#exited;
    clearTimeout(killer);
  }

  #until(what: string, done: () => boolean, timeoutMs: number): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!done()) return;
        this.#checks.delete(check);
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.#checks.delete(check);
        reject(
          new Error(
            `group-member (${this.protocol}): no ${what} within ${timeoutMs} ms; output: ${this.#output}`,
          ),
        );
      }, timeoutMs);
      this.#checks.add(check);
    });
  }

  #onLine(line: string): void {
    const fields = new Map(
      line
        .split(" ")
        .slice(1)
        .map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]),
    );
    if (line.startsWith("ASSIGNED ")) this.#assignedCount = Number(fields.get("count"));
    else if (line.startsWith("RECORD ")) {
      // The value is last and may hold spaces: everything after "value=".
      this.records.push({
        topic: fields.get("topic") ?? "",
        partition: Number(fields.get("partition")),
        offset: Number(fields.get("offset")),
        value: line.slice(line.indexOf(" value=") + " value=".length),
      });
    } else this.#note(`${line}\n`);
    for (const check of [...this.#checks]) check();
  }

  #note(text: string): void {
    this.#output = (this.#output + text).slice(-4000);
  }
}

/** The members a test started, to stop them all at its end (or when it says so). */
export class GroupMembers {
  readonly #brokers: readonly string[];
  readonly #members: GroupMember[] = [];

  constructor(brokers: readonly string[]) {
    this.#brokers = brokers;
  }

  start(groupId: string, protocol: GroupProtocol, topics: readonly string[]): GroupMember {
    const member = startGroupMember({ brokers: this.#brokers, groupId, protocol, topics });
    this.#members.push(member);
    return member;
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.#members.splice(0).map((m) => m.stop()));
  }
}
