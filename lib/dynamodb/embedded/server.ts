/**
 * The embedded lease store's server: dynalite (a DynamoDB-compatible API on LevelDB) serving the
 * state directory on a loopback port, so the CLI uses the same DynamoDbLeaseStore as the Lambda.
 *
 * Why a separate server process rather than dynalite inside each CLI process: LevelDB lets one
 * process open a directory at a time, and several `kafka-mirror run` processes must share the
 * leases. One detached server per state directory owns the LevelDB files; every CLI process talks
 * to it over HTTP. LevelDB's own LOCK file (an fcntl lock the kernel drops when its process dies)
 * decides which of two racing servers wins, so there is no lock file of ours that could go stale.
 * The server exits after `idleMs` without requests; the next CLI call starts it again.
 *
 * Its port is on loopback, where every local user can reach it: a request without the state
 * directory's secret (`SECRET_HEADER`) is refused before dynalite sees it.
 */
import { timingSafeEqual } from "node:crypto";
import { once } from "node:events";
import type { IncomingMessage, RequestListener, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import dynalite from "dynalite";
import {
  DATA_DIR,
  readOrCreateSecret,
  removeServerRecord,
  SECRET_HEADER,
  writeServerRecord,
} from "./server-file.js";
import { prepareStateDir, stateDirError } from "./state-dir.js";

export interface LeaseServerOptions {
  readonly stateDir: string;
  /** Exit after this long without a request. */
  readonly idleMs: number;
}

export interface RunningLeaseServer {
  readonly port: number;
  /** Resolves when the server has stopped (idle, SIGTERM, SIGINT or stop()). */
  readonly stopped: Promise<void>;
  stop(): Promise<void>;
}

/** Throws STATE_DIR_UNUSABLE when the directory cannot hold the server's files (daemon.ts exits 4). */
export async function startLeaseServer(options: LeaseServerOptions): Promise<RunningLeaseServer> {
  const secret = await prepareStateDir(options.stateDir)
    .then(() => readOrCreateSecret(options.stateDir))
    .catch((error: unknown) => {
      throw stateDirError(options.stateDir, error);
    });
  const server = dynalite({ path: join(options.stateDir, DATA_DIR), createTableMs: 0 });
  requireSecret(server, secret);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as AddressInfo).port;
  // LevelDB opens lazily: a request makes it open now, and fail now if another live server holds
  // the directory. Only then does this server announce itself.
  await selfCheck(port, secret).catch(async (error: unknown) => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    throw error;
  });

  let idleTimer: NodeJS.Timeout | undefined;
  let stopping: Promise<void> | undefined;
  let resolveStopped = (): void => {};
  const stopped = new Promise<void>((resolve) => {
    resolveStopped = resolve;
  });
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      clearTimeout(idleTimer);
      await removeServerRecord(options.stateDir, process.pid);
      server.closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      resolveStopped();
    })();
    return stopping;
  };
  const armIdle = (): void => {
    clearTimeout(idleTimer);
    idleTimer = setTimeout(() => void stop(), options.idleMs);
  };
  server.on("request", armIdle);
  armIdle();
  await writeServerRecord(options.stateDir, { pid: process.pid, port }).catch(async (error: unknown) => {
    await stop();
    throw stateDirError(options.stateDir, error);
  });
  return { port, stopped, stop };
}

/** Puts a secret check in front of dynalite's request handler. */
function requireSecret(server: Server, secret: string): void {
  const expected = Buffer.from(secret, "utf8");
  const handlers = server.listeners("request") as RequestListener[];
  server.removeAllListeners("request");
  server.on("request", (request: IncomingMessage, response: ServerResponse) => {
    const given = request.headers[SECRET_HEADER];
    const actual = Buffer.from(typeof given === "string" ? given : "", "utf8");
    if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) {
      request.resume();
      response.writeHead(403, { "content-type": "application/x-amz-json-1.0" });
      response.end(
        JSON.stringify({
          __type: "com.amazonaws.dynamodb.v20120810#AccessDeniedException",
          message: `the embedded lease store needs the state directory's secret in ${SECRET_HEADER}`,
        }),
      );
      return;
    }
    for (const handler of handlers) handler.call(server, request, response);
  });
}

async function selfCheck(port: number, secret: string): Promise<void> {
  const response = await fetch(`http://127.0.0.1:${port}/`, {
    method: "POST",
    headers: {
      [SECRET_HEADER]: secret,
      "content-type": "application/x-amz-json-1.0",
      "x-amz-target": "DynamoDB_20120810.ListTables",
      // dynalite checks that a signature is present, not that it is valid.
      authorization:
        "AWS4-HMAC-SHA256 Credential=local/20200101/local/dynamodb/aws4_request, SignedHeaders=host, Signature=0",
      "x-amz-date": "20200101T000000Z",
    },
    body: "{}",
  });
  if (!response.ok) {
    throw new Error(`lease data could not be opened (HTTP ${response.status}): ${await response.text()}`);
  }
}
