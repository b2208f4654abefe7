/**
 * librdkafka's own consumer-group calls (.testbed/bin/group-client, testbed/group-client/): an
 * independent client of the test broker's ListGroups, DescribeGroups, OffsetFetch and admin
 * OffsetCommit, sharing no code with kafkajs or our adapter. Each call runs the program once and
 * parses its `KIND key=value ...` lines.
 */
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { MOCK_KAFKA_BINARY } from "./mock-kafka.js";

export const GROUP_CLIENT = join(dirname(MOCK_KAFKA_BINARY), "group-client");

export type GroupClientLine = { readonly kind: string } & Readonly<Record<string, string>>;

/** Runs `group-client MODE BOOTSTRAP ARGS...`; rejects unless it exits 0 after DONE. */
export async function runGroupClient(
  mode: "legacy" | "admin" | "states" | "offsets" | "alter",
  brokers: readonly string[],
  args: readonly string[] = [],
): Promise<GroupClientLine[]> {
  const child = spawn(GROUP_CLIENT, [mode, brokers.join(","), ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-4000);
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", resolve);
  });
  const lines = stdout.split("\n").filter((l) => l.length > 0);
  if (code !== 0 || lines.at(-1) !== "DONE") {
    throw new Error(`group-client ${mode} failed (exit ${code}): ${stderr.trim()}; stdout: ${stdout}`);
  }
  return lines.slice(0, -1).map(parseLine);
}

function parseLine(line: string): GroupClientLine {
  const [kind = "", ...pairs] = line.split(" ");
  const fields: Record<string, string> = { kind };
  for (const pair of pairs) {
    const at = pair.indexOf("=");
    fields[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return fields as GroupClientLine;
}

/** Polls `check` (every 200 ms) until it returns a value other than undefined: 30 s by default, below the 44 s the unpatched mock makes a rejoining group wait. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > end)
      throw new Error(`${what}: not within ${timeoutMs} ms${last ? `; last error: ${String(last)}` : ""}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** What a coordinator answers while it is still being set up; anything else is a real refusal. */
const COORDINATOR_NOT_READY = new Set([
  "NOT_COORDINATOR",
  "COORDINATOR_LOAD_IN_PROGRESS",
  "COORDINATOR_NOT_AVAILABLE",
]);

/**
 * `group-client alter`, until every partition is committed. Real Kafka creates __consumer_offsets
 * at the first group request and its coordinator answers NOT_COORDINATOR per partition until it
 * has loaded (librdkafka's admin call does not retry that, and reports overall NO_ERROR); the
 * mock answers at once. Any other per-partition error fails at once.
 */
export async function alterGroupOffsets(
  brokers: readonly string[],
  groupId: string,
  offsets: readonly string[],
): Promise<void> {
  await eventually(`group-client alter of ${groupId}`, async () => {
    const lines = await runGroupClient("alter", brokers, [groupId, ...offsets]);
    const failed = lines.filter((l) => l.kind === "ALTERED" && l.err !== "NO_ERROR");
    const refused = failed.find((l) => !COORDINATOR_NOT_READY.has(l.err ?? ""));
    if (refused !== undefined) throw new Error(`alter of ${groupId} refused: ${JSON.stringify(refused)}`);
    return failed.length === 0 && lines.some((l) => l.kind === "ALTERED") ? true : undefined;
  });
}
