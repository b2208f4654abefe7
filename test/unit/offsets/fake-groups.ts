/**
 * An in-memory GroupAdmin for the sync's unit tests: groups with a member count and committed
 * offsets; a commit to a group with members is refused with GROUP_NOT_EMPTY, as Kafka's
 * coordinator refuses a commit without a generation.
 */
import { type ErrorCode, ReplicatorError } from "../../../lib/errors.js";
import type { GroupAdmin } from "../../../lib/offsets/group-admin.js";

interface FakeGroup {
  members: number;
  readonly offsets: Map<string, { offset: number; metadata: string | null }>;
}

export class FakeGroupAdmin implements GroupAdmin {
  readonly groups = new Map<string, FakeGroup>();
  commits: { groupId: string; topic: string; partition: number; offset: number }[] = [];
  /** Runs before a commit is applied (a member joining in between). */
  beforeCommit?: (groupId: string) => void;

  group(groupId: string): FakeGroup {
    let g = this.groups.get(groupId);
    if (g === undefined) {
      g = { members: 0, offsets: new Map() };
      this.groups.set(groupId, g);
    }
    return g;
  }

  setCommitted(groupId: string, topic: string, partition: number, offset: number): void {
    this.group(groupId).offsets.set(`${topic}:${partition}`, { offset, metadata: null });
  }

  committed(groupId: string, topic: string, partition: number): number | undefined {
    return this.groups.get(groupId)?.offsets.get(`${topic}:${partition}`)?.offset;
  }

  async listGroups() {
    return [...this.groups.keys()].map((groupId) => ({ groupId, protocolType: "consumer", state: "Empty" }));
  }

  async describeGroups(groupIds: readonly string[]) {
    return groupIds.map((groupId) => {
      const members = this.groups.get(groupId)?.members ?? 0;
      return { groupId, state: members > 0 ? "Stable" : "Empty", members };
    });
  }

  async fetchOffsets(groupId: string, topics?: readonly string[]) {
    const g = this.groups.get(groupId);
    if (g === undefined) return [];
    return [...g.offsets].flatMap(([key, { offset, metadata }]) => {
      const at = key.lastIndexOf(":");
      const topic = key.slice(0, at);
      if (topics !== undefined && !topics.includes(topic)) return [];
      return [{ topic, partition: Number(key.slice(at + 1)), offset, metadata }];
    });
  }

  async commitOffsets(
    groupId: string,
    offsets: readonly { topic: string; partition: number; offset: number; metadata?: string }[],
  ) {
    this.beforeCommit?.(groupId);
    const g = this.group(groupId);
    if (g.members > 0) {
      throw new ReplicatorError("GROUP_NOT_EMPTY" as ErrorCode, `group ${groupId} has active members`, {
        retryable: false,
        details: { groupId },
      });
    }
    for (const o of offsets) {
      g.offsets.set(`${o.topic}:${o.partition}`, { offset: o.offset, metadata: o.metadata ?? null });
      this.commits.push({ groupId, topic: o.topic, partition: o.partition, offset: o.offset });
    }
  }

  async close() {}
}
