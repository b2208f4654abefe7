// stunnel (apt `stunnel4`, a real TLS terminator) in front of EVERY broker of a mock cluster, and
// the cluster told to advertise the terminators' addresses (launcher `advertise`), so Metadata
// and FindCoordinator send clients to TLS ports: bootstrap, Metadata, Produce, Fetch, ListOffsets,
// InitProducerId and the admin calls all go through TLS. With `mutual`, stunnel demands a client
// certificate signed by the test CA (`verifyChain` + `requireCert`).
import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { join } from "node:path";
import type { MockKafka } from "./mock-kafka.js";
import { freePort } from "./net.js";
import type { TestPki } from "./tls-certs.js";

export interface TlsFrontOptions {
  /** Broker ids 1..brokers of the cluster. */
  readonly brokers: number;
  /** Require a client certificate from the test CA. @default true */
  readonly mutual?: boolean;
  /**
   * Leave the brokers advertising their plaintext listeners: only bootstrap goes through TLS.
   * For showing that the every-connection test catches it. @default false
   */
  readonly advertisePlaintext?: boolean;
}

export interface TlsFront {
  /** The TLS addresses, broker id order; also what Metadata advertises. */
  readonly bootstrapServers: string[];
  /** The brokers' own plaintext listeners (what stunnel connects to). */
  readonly plaintextListeners: string[];
  /** From now on advertise the brokers' plaintext listeners again (to watch tests go red). */
  advertisePlaintext(): Promise<void>;
  stop(): Promise<void>;
}

export async function startTlsFront(
  kafka: MockKafka,
  pki: TestPki,
  opts: TlsFrontOptions,
): Promise<TlsFront> {
  const ids = Array.from({ length: opts.brokers }, (_, i) => i + 1);
  const plaintextListeners = await Promise.all(ids.map((id) => kafka.listener(id)));
  const ports = await Promise.all(ids.map(() => freePort()));
  const mutual = opts.mutual ?? true;
  const config = join(pki.dir, `stunnel-${ports[0]}.conf`);
  const services = ids.flatMap((id, i) => [
    `[broker-${id}]`,
    `accept = 127.0.0.1:${ports[i]}`,
    `connect = ${plaintextListeners[i]}`,
  ]);
  writeFileSync(
    config,
    [
      "foreground = yes",
      "pid =",
      "debug = 4",
      `cert = ${pki.serverCert.path}`,
      `key = ${pki.serverKey.path}`,
      ...(mutual ? [`CAfile = ${pki.ca.path}`, "verifyChain = yes", "requireCert = yes"] : []),
      ...services,
      "",
    ].join("\n"),
  );
  const child = spawn("stunnel4", [config], { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    log = (log + chunk.toString("utf8")).slice(-4000);
  });
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  };
  try {
    for (const port of ports) await waitForPort(port, child, () => log);
    if (!opts.advertisePlaintext) {
      for (const [i, id] of ids.entries()) await kafka.advertise(id, "127.0.0.1", ports[i] ?? 0);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  const advertisePlaintext = async (): Promise<void> => {
    for (const [i, id] of ids.entries()) {
      const [host = "", port = ""] = (plaintextListeners[i] ?? "").split(":");
      await kafka.advertise(id, host, Number(port));
    }
  };
  return {
    bootstrapServers: ports.map((p) => `127.0.0.1:${p}`),
    plaintextListeners,
    advertisePlaintext,
    stop,
  };
}

async function waitForPort(port: number, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`stunnel exited: ${log()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: "127.0.0.1", port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`stunnel not listening on ${port}: ${log()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
