/**
 * An in-memory GroupAdmin (our port, lib/core/ports.ts) for unit tests of offset translation,
 * sync and failover. It follows Kafka's group coordinator where the port leaves things open:
 * a group that only has committed offsets is listed as Empty with protocol type "" and type
 * "classic" (Kafka creates a classic group for an admin commit); an unknown group is described
 * as Dead with 0 members, type "classic"; an admin commit while the group has members is
 * refused (GROUP_NOT_EMPTY) and commits nothing; a commit to an unknown group creates it, Empty.
 * Fetching given topics answers only partitions the test declared with `setPartitions`, -1 where
 * nothing is committed (as Kafka answers partitions asked for by name). Arguments are checked as
 * KafkaGroupAdmin checks them, with its own checks (CONFIG_INVALID before anything happens): a
 * -1 from fetchOffsets committed back is refused here as it is there.
 */
import type { GroupAdmin, GroupType } from "../../lib/core/ports.js";
import { ReplicatorError } from "../../lib/errors.js";
import { requireGroupId, requireOffsets } from "../../lib/kafka/admin/group-admin.js";

type Committed = { offset: number; metadata: string | null };

interface FakeGroup {
  protocolType: string;
  type: GroupType;
  state: string;
  members: number;
  /** "topic\0partition" -> committed offset. */
  readonly offsets: Map<string, Committed>;
}

export class FakeGroupAdmin implements GroupAdmin {
  readonly #groups = new Map<string, FakeGroup>();
  readonly #partitions = new Map<string, number>();
  readonly #failures: { readonly call: keyof GroupAdmin; readonly error: Error }[] = [];
  /** Every commit that landed, in order (tests check what sync committed and when). */
  readonly commits: { groupId: string; offsets: { topic: string; partition: number; offset: number }[] }[] =
    [];
  /** Calls made so far, by name, failed ones included (tests count a retry layer's attempts). */
  readonly calls = new Map<keyof GroupAdmin, number>();
  closed = false;

  /** Declares a consumer group with active members (state "Stable" unless given, type "classic" unless given). */
  setGroup(
    groupId: string,
    group: { members: number; state?: string; protocolType?: string; type?: GroupType },
  ): void {
    const existing = this.#group(groupId);
    existing.members = group.members;
    existing.state = group.state ?? (group.members > 0 ? "Stable" : "Empty");
    existing.protocolType = group.protocolType ?? "consumer";
    existing.type = group.type ?? "classic";
  }

  /** The members leave: the group becomes Empty at once, as on Kafka. */
  emptyGroup(groupId: string): void {
    const group = this.#group(groupId);
    group.members = 0;
    group.state = "Empty";
  }

  /** The cluster's partition count of a topic, for fetchOffsets with topics. */
  setPartitions(topic: string, partitions: number): void {
    this.#partitions.set(topic, partitions);
  }

  /** Sets a committed offset directly, as the group's own consumers would. */
  setCommitted(
    groupId: string,
    topic: string,
    partition: number,
    offset: number,
    metadata: string | null = null,
  ): void {
    this.#group(groupId).offsets.set(key(topic, partition), { offset, metadata });
  }

  /** The next call of `call` fails with `error` (once per queued failure). */
  failNext(call: keyof GroupAdmin, error: Error): void {
    this.#failures.push({ call, error });
  }

  async listGroups() {
    this.#maybeFail("listGroups");
    return [...this.#groups]
      .map(([groupId, g]) => ({ groupId, protocolType: g.protocolType, state: g.state, type: g.type }))
      .sort((a, b) => (a.groupId < b.groupId ? -1 : 1));
  }

  async describeGroups(groupIds: readonly string[]) {
    for (const groupId of groupIds) requireGroupId("describeGroups", groupId);
    this.#maybeFail("describeGroups");
    return groupIds.map((groupId) => {
      const g = this.#groups.get(groupId);
      return { groupId, state: g?.state ?? "Dead", members: g?.members ?? 0, type: g?.type ?? "classic" };
    });
  }

  async fetchOffsets(groupId: string, topics?: readonly string[]) {
    requireGroupId("fetchOffsets", groupId);
    this.#maybeFail("fetchOffsets");
    const offsets = this.#groups.get(groupId)?.offsets ?? new Map<string, Committed>();
    const rows =
      topics === undefined
        ? [...offsets].map(([k, c]) => ({ ...split(k), ...c }))
        : topics.flatMap((topic) =>
            Array.from({ length: this.#partitions.get(topic) ?? 0 }, (_, partition) => {
              const c = offsets.get(key(topic, partition));
              return { topic, partition, offset: c?.offset ?? -1, metadata: c?.metadata ?? null };
            }),
          );
    return rows.sort((a, b) =>
      a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1,
    );
  }

  async commitOffsets(
    groupId: string,
    offsets: readonly { topic: string; partition: number; offset: number; metadata?: string }[],
  ) {
    requireGroupId("commitOffsets", groupId);
    requireOffsets(offsets);
    this.#maybeFail("commitOffsets");
    if (offsets.length === 0) return;
    const group = this.#groups.get(groupId);
    if (group !== undefined && group.members > 0) {
      throw new ReplicatorError(
        "GROUP_NOT_EMPTY",
        `committing offsets of group ${JSON.stringify(groupId)} refused: the group has active members`,
        {
          details: { groupId, kafkaErrorCode: 25, kafkaError: "UNKNOWN_MEMBER_ID" },
        },
      );
    }
    const target = this.#group(groupId);
    for (const o of offsets)
      target.offsets.set(key(o.topic, o.partition), { offset: o.offset, metadata: o.metadata ?? "" });
    this.commits.push({
      groupId,
      offsets: offsets.map(({ topic, partition, offset }) => ({ topic, partition, offset })),
    });
  }

  async close() {
    this.closed = true;
  }

  #group(groupId: string): FakeGroup {
    let group = this.#groups.get(groupId);
    if (group === undefined) {
      group = { protocolType: "", type: "classic", state: "Empty", members: 0, offsets: new Map() };
      this.#groups.set(groupId, group);
    }
    return group;
  }

  #maybeFail(call: keyof GroupAdmin): void {
    this.calls.set(call, (this.calls.get(call) ?? 0) + 1);
    const i = this.#failures.findIndex((f) => f.call === call);
    if (i === -1) return;
    const [failure] = this.#failures.splice(i, 1);
    if (failure !== undefined) throw failure.error;
  }
}

function key(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

function split(k: string): { topic: string; partition: number } {
  const at = k.lastIndexOf("\u0000");
  return { topic: k.slice(0, at), partition: Number(k.slice(at + 1)) };
}
