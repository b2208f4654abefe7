/**
 * Entry point of the detached lease server process: `daemon.ts <stateDir> <idleMs>`. Started by
 * ensureLeaseServer; exits 0 when idle or told to stop, SERVER_EXIT when it could not start.
 */
import { isReplicatorError } from "../../errors.js";
import { startLeaseServer } from "./server.js";
import { SERVER_EXIT } from "./server-file.js";

// LevelDB creates its files with the process umask: 0600, like the rest of the state directory.
process.umask(0o077);
const [stateDir, idle] = process.argv.slice(2);
const idleMs = Number(idle);
if (stateDir === undefined || !Number.isSafeInteger(idleMs) || idleMs <= 0) {
  process.stderr.write("usage: daemon.ts <stateDir> <idleMs>\n");
  process.exit(2);
}
try {
  const server = await startLeaseServer({ stateDir, idleMs });
  process.stderr.write(`lease server ${process.pid} on 127.0.0.1:${server.port}\n`);
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const)
    process.once(signal, () => void server.stop());
  await server.stopped;
  process.exit(0);
} catch (error) {
  process.stderr.write(`lease server ${process.pid} not started: ${(error as Error).message}\n`);
  process.exit(
    isReplicatorError(error, "STATE_DIR_UNUSABLE") ? SERVER_EXIT.stateDirUnusable : SERVER_EXIT.notStarted,
  );
}
