/**
 * Starts AWS's DynamoDB Local emulator (fetched by `npm run setup:testbed` into
 * .testbed/dynamodb-local) on a free port, for integration tests. One emulator per test file;
 * tests use a unique table each.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync } from "node:fs";
import { Socket } from "node:net";
import { after, before } from "node:test";
import { fileURLToPath } from "node:url";
import { type DynamoDBClient, ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { createDynamoDbClient } from "../../lib/dynamodb/client.js";
import { createLeaseTable } from "../../lib/dynamodb/lease-table.js";
import { freePort } from "./net.js";

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";

const EMULATOR_DIR = fileURLToPath(new URL("../../.testbed/dynamodb-local/", import.meta.url));
const JAR = `${EMULATOR_DIR}DynamoDBLocal.jar`;
/** ~2.5 s on an idle machine; CI shares 2 cores with brokers and other tests. */
const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 5_000;

export interface DynamoDbLocal {
  readonly endpoint: string;
  readonly port: number;
  /**
   * A new client for this emulator: fixed region, dummy credentials, short timeouts and two
   * attempts, so a stopped emulator shows up as a quick failure rather than a hang. The caller
   * owns it and calls `destroy()`.
   */
  client(): DynamoDBClient;
  /** Stops the emulator (SIGTERM, then SIGKILL). Safe to call twice. */
  stop(): Promise<void>;
  /**
   * Stops it if running and starts it again on the same port with the same storage. Only a
   * `dbPath` emulator keeps its tables across a restart; an in-memory one comes back empty.
   */
  restart(): Promise<void>;
}

export interface DynamoDbLocalOptions {
  /** Directory for the emulator's SQLite file (created if needed); in memory when omitted. */
  readonly dbPath?: string;
}

export async function startDynamoDbLocal(opts: DynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  if (!existsSync(JAR)) {
    throw new Error(`DynamoDB Local not found at ${JAR}: run npm run setup:testbed`);
  }
  if (opts.dbPath !== undefined) mkdirSync(opts.dbPath, { recursive: true });
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const storage = opts.dbPath === undefined ? ["-inMemory"] : ["-dbPath", opts.dbPath];
  let running: Emulator | undefined = await launch(port, storage, endpoint);

  const stop = async (): Promise<void> => {
    const emulator = running;
    running = undefined;
    if (emulator !== undefined) await emulator.stop();
  };
  return {
    endpoint,
    port,
    client: () => clientFor(endpoint),
    stop,
    async restart() {
      await stop();
      running = await launch(port, storage, endpoint);
    },
  };
}

/** The emulator and client of one describe block, started by useDynamoDbLocal. */
export interface DynamoDbLocalSuite {
  readonly ddb: DynamoDbLocal;
  readonly client: DynamoDBClient;
  /** A new lease table with a unique name, so tests share nothing but the emulator. */
  freshLeaseTable(): Promise<string>;
}

/**
 * Registers before/after hooks in the enclosing describe: one emulator and one client for its
 * tests, both closed afterwards. Read `ddb` and `client` inside tests, not while declaring them.
 */
export function useDynamoDbLocal(): DynamoDbLocalSuite {
  let ddb: DynamoDbLocal | undefined;
  let client: DynamoDBClient | undefined;
  before(async () => {
    ddb = await startDynamoDbLocal();
    client = ddb.client();
  });
  after(async () => {
    client?.destroy();
    await ddb?.stop();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("DynamoDB Local is not started: use it inside a test");
    return value;
  };
  return {
    get ddb() {
      return started(ddb);
    },
    get client() {
      return started(client);
    },
    async freshLeaseTable() {
      const tableName = `leases-${randomUUID()}`;
      await createLeaseTable(started(client), tableName);
      return tableName;
    },
  };
}

/** Generous timeout by default: DynamoDB Local shares two cores with everything else here. */
export function clientFor(endpoint: string, requestTimeoutMs = 5_000): DynamoDBClient {
  return createDynamoDbClient({
    endpoint,
    region: "us-east-1",
    // DynamoDB Local accepts any credentials; fixed ones keep the SDK from searching the host.
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
    requestTimeoutMs,
  });
}

const children = new Set<ChildProcess>();
let exitHooksInstalled = false;

/** Kills every emulator still running when this process exits or is interrupted. */
function trackChild(child: ChildProcess): void {
  children.add(child);
  child.once("exit", () => children.delete(child));
  if (exitHooksInstalled) return;
  exitHooksInstalled = true;
  const killAll = (): void => {
    for (const c of children) c.kill("SIGKILL");
  };
  process.once("exit", killAll);
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      killAll();
      // Our listener replaced the default action; re-raise so the process still dies of it.
      process.kill(process.pid, signal);
    });
  }
}

interface Emulator {
  stop(): Promise<void>;
}

async function launch(port: number, storage: readonly string[], endpoint: string): Promise<Emulator> {
  const child = spawn(
    "java",
    [
      `-Djava.library.path=${EMULATOR_DIR}DynamoDBLocal_lib`,
      "-jar",
      JAR,
      ...storage,
      "-port",
      String(port),
      "-disableTelemetry",
    ],
    { cwd: EMULATOR_DIR, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString("utf8")).slice(-4_000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<string>((resolve) => {
    child.once("error", (error) => resolve(`could not start java: ${error.message}`));
    child.once("exit", (code, signal) => resolve(`exited (code ${code}, signal ${signal})`));
  });

  // A test file that forgets stop() (or fails before after() runs) must neither hang on this
  // child nor leave a JVM behind once it exits.
  trackChild(child);
  child.unref();
  for (const stream of [child.stdout, child.stderr]) if (stream instanceof Socket) stream.unref();

  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  };

  try {
    await waitUntilReady(endpoint, exited);
  } catch (error) {
    await stop();
    throw new Error(`DynamoDB Local did not start on ${endpoint}: ${(error as Error).message}\n${output}`);
  }
  return { stop };
}

async function waitUntilReady(endpoint: string, exited: Promise<string>): Promise<void> {
  let exitReason: string | undefined;
  void exited.then((reason) => {
    exitReason = reason;
  });
  const probe = createDynamoDbClient({
    endpoint,
    region: "us-east-1",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
    maxAttempts: 1,
    connectionTimeoutMs: 500,
    requestTimeoutMs: 2_000,
  });
  const deadline = Date.now() + READY_TIMEOUT_MS;
  try {
    for (;;) {
      if (exitReason !== undefined) throw new Error(exitReason);
      try {
        await probe.send(new ListTablesCommand({ Limit: 1 }));
        return;
      } catch (error) {
        if (Date.now() > deadline)
          throw new Error(`not ready after ${READY_TIMEOUT_MS} ms`, { cause: error });
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    probe.destroy();
  }
}
