// What MirrorMaker 2's Connect herder says about its connectors and tasks, read from its status
// topic (`mm2-status.<source alias>.internal` on the target): a dedicated MM2 node has no public
// REST API to ask (its internal server only forwards task configs between nodes), and the status
// topic is where Connect's own REST API reads the same states from. Records are keyed
// `status-connector-<name>` / `status-task-<name>-<n>` with JSON values such as
// {"state":"RUNNING","trace":null,"worker_id":"source->target","generation":3}; the latest record
// of a key is its state, a null value deletes it.
import type { ClusterView } from "./partition-data.js";

export interface ConnectState {
  readonly state: string;
  /** The stack trace of a FAILED connector or task. */
  readonly trace: string | null;
}

export async function readConnectStatus(
  view: ClusterView,
  topic: string,
): Promise<Map<string, ConnectState>> {
  const listed = (await view.admin.listTopics()).find((t) => t.name === topic);
  if (listed === undefined) throw new Error(`no ${topic} yet`);
  const states = new Map<string, ConnectState>();
  for (let partition = 0; partition < listed.partitions; partition++) {
    for (const record of await view.read({ topic, partition })) {
      if (record.key === null) continue;
      const key = record.key.toString("utf8");
      if (record.value === null) states.delete(key);
      else states.set(key, parseState(record.value));
    }
  }
  return states;
}

function parseState(value: Buffer): ConnectState {
  const parsed: unknown = JSON.parse(value.toString("utf8"));
  if (typeof parsed !== "object" || parsed === null) return { state: "UNKNOWN", trace: null };
  const { state, trace } = parsed as { state?: unknown; trace?: unknown };
  return {
    state: typeof state === "string" ? state : "UNKNOWN",
    trace: typeof trace === "string" ? trace : null,
  };
}

const SOURCE_CONNECTOR = "MirrorSourceConnector";

export interface SourceTasksState {
  /** The connector and every one of its tasks (at least one) are RUNNING. */
  readonly running: boolean;
  /** What FAILED, with the first lines of its trace; null when nothing did. */
  readonly failed: string | null;
  /** The states seen, for a timeout message. */
  readonly summary: string;
}

/** Where the MirrorSourceConnector (the one that copies records) and its tasks stand. */
export function sourceTasksState(states: ReadonlyMap<string, ConnectState>): SourceTasksState {
  const connector = states.get(`status-connector-${SOURCE_CONNECTOR}`);
  const tasks = [...states].filter(([key]) => key.startsWith(`status-task-${SOURCE_CONNECTOR}-`));
  const failed = [...(connector ? [[SOURCE_CONNECTOR, connector] as const] : []), ...tasks].find(
    ([, s]) => s.state === "FAILED",
  );
  const summary =
    [
      `connector ${connector?.state ?? "unknown"}`,
      ...tasks.map(([key, s]) => `${key.slice("status-task-".length)} ${s.state}`),
    ].join(", ") || "no status";
  return {
    running:
      connector?.state === "RUNNING" && tasks.length > 0 && tasks.every(([, s]) => s.state === "RUNNING"),
    failed: failed
      ? `${failed[0]} FAILED: ${(failed[1].trace ?? "").split("\n").slice(0, 8).join("\n")}`
      : null,
    summary,
  };
}
