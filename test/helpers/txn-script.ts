/**
 * txn-client's script mode (.testbed/bin/txn-client): librdkafka's own transactional producer,
 * driven one command a line, so a test can lay out committed and aborted transactions exactly.
 */
import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { MOCK_KAFKA_BINARY } from "./mock-kafka.js";

export const TXN_CLIENT = join(dirname(MOCK_KAFKA_BINARY), "txn-client");
const STEP_TIMEOUT_MS = 60_000;

/** txn-client's script mode: one transactional producer, one command and one answer a line. */
export class ScriptedProducer {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #lines: string[] = [];
  readonly #waiters: ((line: string) => void)[] = [];
  readonly #exited: Promise<number | null>;
  #stderr = "";

  constructor(brokers: readonly string[], topic: string) {
    this.#child = spawn(TXN_CLIENT, [brokers.join(","), topic, "0", `txn-${randomUUID()}`, "script"]);
    this.#child.stderr.on("data", (chunk: Buffer) => {
      this.#stderr = (this.#stderr + chunk.toString("utf8")).slice(-4000);
    });
    this.#exited = new Promise((resolve) => this.#child.once("exit", (code) => resolve(code)));
    createInterface({ input: this.#child.stdout }).on("line", (line) => {
      const waiter = this.#waiters.shift();
      if (waiter) waiter(line);
      else this.#lines.push(line);
    });
  }

  /** The next line txn-client prints. */
  #next(what: string): Promise<string> {
    const line = this.#lines.shift();
    if (line !== undefined) return Promise.resolve(line);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(new Error(`txn-client: no answer to "${what}" in ${STEP_TIMEOUT_MS} ms: ${this.#stderr}`)),
        STEP_TIMEOUT_MS,
      );
      this.#waiters.push((answer) => {
        clearTimeout(timer);
        resolve(answer);
      });
    });
  }

  async init(): Promise<void> {
    assert.equal(await this.#next("init"), "S INIT err=NO_ERROR");
  }

  /** Sends one command; the answer must report success. */
  async run(command: string): Promise<void> {
    this.#child.stdin.write(`${command}\n`);
    const answer = await this.#next(command);
    assert.match(answer, /^S [A-Z]+ .*err=NO_ERROR$/, `txn-client "${command}": ${answer}`);
  }

  /** One whole transaction: begin, PREFIX-0..COUNT-1, then commit or abort. */
  async transaction(prefix: string, count: number, end: "commit" | "abort"): Promise<void> {
    await this.run("begin");
    await this.run(`produce ${prefix} ${count}`);
    await this.run(end);
  }

  async close(): Promise<void> {
    this.#child.stdin.end();
    assert.equal(await this.#next("end of input"), "DONE");
    assert.equal(await this.#exited, 0, `txn-client exit status: ${this.#stderr}`);
  }

  async kill(): Promise<void> {
    if (this.#child.exitCode === null && this.#child.signalCode === null) this.#child.kill("SIGKILL");
    await this.#exited;
  }
}
