/**
 * GroupAdmin over the cluster client: consumer groups as each group's coordinator knows them
 * (FindCoordinator), and admin offset commits the way Kafka's AdminClient makes them
 * (alterConsumerGroupOffsets: generation -1, no member id, refused while the group has members).
 * Each call is one attempt, re-routed once after a lost connection (ports.ts, "Retries"); a
 * coordinator that moved (NOT_COORDINATOR) fails the call as retryable, and the next call looks
 * it up again: nothing is cached.
 */
import type { GroupAdmin, GroupDescription, GroupListing, GroupType } from "../../core/ports.js";
import { isReplicatorError, ReplicatorError } from "../../errors.js";
import { type Broker, type ClusterClientOptions, KafkaClusterClient } from "../wire/cluster-client.js";
import { translateKafkajsError } from "../wire/connection.js";
import { KafkaErrorCode, kafkaError } from "../wire/error-codes.js";
import {
  type CommitAnswer,
  decodeListGroupsResponse,
  encodeListGroupsRequest,
  type FetchedOffset,
  LIST_GROUPS,
  type ListedGroup,
  OFFSET_COMMIT,
  OFFSET_FETCH,
  type OffsetToCommit,
  offsetCommitRequest,
  offsetFetchRequest,
} from "../wire/groups.js";
import { allTopicsMetadata, groupCoordinatorId } from "../wire/kafkajs-internals.js";
import { describeOnCoordinator } from "./group-describe.js";
import { groupRefusal, noAnswer, q } from "./group-refusal.js";

type CommittedOffset = Omit<FetchedOffset, "errorCode">;

/**
 * The group types listed (ListGroups v5's filter): the ones whose members describeGroups can see.
 * Share and streams groups (Kafka 4) would look memberless to it, so they are never offered to the
 * sync.
 */
const LISTED_TYPES: readonly GroupType[] = ["classic", "consumer"];

/**
 * What a coordinator answers an admin commit with while the group has members: Kafka's classic
 * and KIP-848 coordinators alike UNKNOWN_MEMBER_ID (the empty member id is not one of them; seen
 * on Kafka 4.1.2 for both), others ILLEGAL_GENERATION or REBALANCE_IN_PROGRESS, NON_EMPTY_GROUP
 * where a broker names it so.
 */
const GROUP_HAS_MEMBERS: ReadonlySet<number> = new Set([
  KafkaErrorCode.UNKNOWN_MEMBER_ID,
  KafkaErrorCode.ILLEGAL_GENERATION,
  KafkaErrorCode.REBALANCE_IN_PROGRESS,
  KafkaErrorCode.NON_EMPTY_GROUP,
]);

/** THE builder of a cluster's group admin (next to `new KafkaClusterAdmin`), for the replicator and the CLI. */
export function createGroupAdmin(options: ClusterClientOptions): GroupAdmin {
  return new KafkaGroupAdmin(options);
}

export class KafkaGroupAdmin implements GroupAdmin {
  readonly #client: KafkaClusterClient;

  constructor(options: ClusterClientOptions) {
    this.#client = new KafkaClusterClient(options);
  }

  /** ListGroups of every broker (each lists the groups it coordinates), merged by group id. */
  listGroups(): Promise<GroupListing[]> {
    return this.#once("listing consumer groups", {}, async () => {
      const { ids } = await this.#client.brokers();
      if (ids.length === 0) throw new ReplicatorError("KAFKA_RETRIABLE", "cluster metadata lists no broker");
      const lists = await Promise.all(ids.map((id) => this.#listGroupsOn(id)));
      const byId = new Map(lists.flat().map((g) => [g.groupId, g]));
      return [...byId.values()].sort((a, b) => (a.groupId < b.groupId ? -1 : a.groupId > b.groupId ? 1 : 0));
    });
  }

  /** Each coordinator is asked about its groups once per protocol (group-describe.ts). */
  describeGroups(groupIds: readonly string[]): Promise<GroupDescription[]> {
    for (const groupId of groupIds) requireGroupId("describeGroups", groupId);
    if (groupIds.length === 0) return Promise.resolve([]);
    const what = `describing group(s) ${groupIds.map((g) => JSON.stringify(g)).join(", ")}`;
    return this.#once(what, { groupId: groupIds[0], groupIds }, async () => {
      const unique = [...new Set(groupIds)];
      const coordinators = await Promise.all(unique.map((g) => this.#coordinatorId(g)));
      const byNode = new Map<number, string[]>();
      unique.forEach((g, i) => {
        const node = coordinators[i] as number;
        byNode.set(node, [...(byNode.get(node) ?? []), g]);
      });
      const found = new Map<string, GroupDescription>();
      await Promise.all(
        [...byNode].map(async ([node, ids]) => {
          const broker = await this.#client.broker(node);
          for (const g of await describeOnCoordinator(this.#client, broker, ids)) found.set(g.groupId, g);
        }),
      );
      return groupIds.map((g) => {
        const described = found.get(g);
        if (described === undefined) throw noAnswer(`describing group ${q(g)}`, g);
        return described;
      });
    });
  }

  /** Without `topics`, every partition the group committed; with them, each of their partitions. */
  fetchOffsets(groupId: string, topics?: readonly string[]): Promise<CommittedOffset[]> {
    requireGroupId("fetchOffsets", groupId);
    const what = `fetching committed offsets of group ${q(groupId)}`;
    return this.#once(what, { groupId }, async () => {
      const wanted = topics === undefined ? null : await this.#partitionsOf(topics);
      if (wanted !== null && wanted.length === 0) return [];
      const coordinator = await this.#coordinator(groupId);
      const answer = await this.#client.request(coordinator, OFFSET_FETCH, (v) =>
        offsetFetchRequest(v, groupId, wanted),
      );
      if (answer.errorCode !== KafkaErrorCode.NONE) throw groupRefusal(what, groupId, answer.errorCode);
      const failed = answer.offsets.find((o) => o.errorCode !== KafkaErrorCode.NONE);
      if (failed !== undefined) {
        throw groupRefusal(`${what} (${failed.topic}/${failed.partition})`, groupId, failed.errorCode, {
          topic: failed.topic,
          partition: failed.partition,
        });
      }
      return answer.offsets
        .map(({ topic, partition, offset, metadata }) => ({ topic, partition, offset, metadata }))
        .sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1));
    });
  }

  async commitOffsets(groupId: string, offsets: readonly OffsetToCommit[]): Promise<void> {
    requireGroupId("commitOffsets", groupId);
    requireOffsets(offsets);
    if (offsets.length === 0) return;
    const what = `committing offsets of group ${q(groupId)}`;
    const answers = await this.#once(what, { groupId }, async () => {
      const coordinator = await this.#coordinator(groupId);
      return this.#client.request(coordinator, OFFSET_COMMIT, (v) =>
        offsetCommitRequest(v, groupId, offsets),
      );
    });
    judgeCommit(what, groupId, offsets, answers);
  }

  async close(): Promise<void> {
    await this.#client.disconnect();
  }

  async #listGroupsOn(nodeId: number): Promise<GroupListing[]> {
    const broker = await this.#client.broker(nodeId);
    const { apiName, apiKey, versions } = LIST_GROUPS;
    const apiVersion = this.#client.negotiate(broker, apiName, apiKey, versions);
    const answer = await this.#client.sendBody(
      broker,
      { apiName, apiKey, apiVersion },
      encodeListGroupsRequest(apiVersion, LISTED_TYPES),
      (payload) => decodeListGroupsResponse(apiVersion, payload),
    );
    if (answer.errorCode !== KafkaErrorCode.NONE) {
      const info = kafkaError(answer.errorCode);
      throw new ReplicatorError(
        "GROUP_ADMIN_FAILED",
        `listing consumer groups on broker ${nodeId} failed: ${info.name}`,
        {
          retryable: info.retriable,
          details: { broker: nodeId, kafkaErrorCode: info.code, kafkaError: info.name },
        },
      );
    }
    return answer.groups.flatMap((g) => {
      const type = listedType(g);
      return type === null
        ? []
        : [{ groupId: g.groupId, protocolType: g.protocolType, state: g.state, type }];
    });
  }

  /** Partitions of the topics the cluster has; a topic it does not have gives none. */
  async #partitionsOf(topics: readonly string[]): Promise<{ topic: string; partitions: number[] }[]> {
    const metadata = await allTopicsMetadata(await this.#client.anyBroker());
    const wanted = new Set(topics);
    return metadata.topicMetadata
      .filter((t) => wanted.has(t.topic) && t.topicErrorCode === KafkaErrorCode.NONE)
      .map((t) => ({
        topic: t.topic,
        partitions: t.partitionMetadata.map((p) => p.partitionId).sort((a, b) => a - b),
      }));
  }

  async #coordinator(groupId: string): Promise<Broker> {
    return this.#client.broker(await this.#coordinatorId(groupId));
  }

  async #coordinatorId(groupId: string): Promise<number> {
    return groupCoordinatorId(await this.#client.anyBroker(), groupId);
  }

  /** One attempt; anything but our own typed errors becomes GROUP_ADMIN_FAILED (a refused login stays AUTHENTICATION_FAILED). */
  async #once<T>(what: string, details: Record<string, unknown>, call: () => Promise<T>): Promise<T> {
    try {
      return await this.#client.attempt(what, call);
    } catch (error) {
      if (
        isReplicatorError(error) &&
        (error.code === "GROUP_ADMIN_FAILED" || error.code === "GROUP_NOT_EMPTY")
      )
        throw error;
      const translated = translateKafkajsError(error, what, details);
      if (translated.code === "AUTHENTICATION_FAILED") throw translated;
      throw new ReplicatorError("GROUP_ADMIN_FAILED", translated.message, {
        cause: error,
        retryable: translated.retryable,
        details: translated.details,
      });
    }
  }
}

/**
 * A listed group's type; null for a type the filter should have kept out (a broker that ignores
 * it). ListGroups v4 answers no type: such a broker predates KIP-848, every group is classic.
 */
function listedType(g: ListedGroup): GroupType | null {
  if (g.type === null) return "classic";
  const type = g.type.toLowerCase();
  return LISTED_TYPES.find((t) => t === type) ?? null;
}

/** Every partition answered NONE, or the typed refusal: GROUP_NOT_EMPTY first, as it tells the caller most. */
function judgeCommit(
  what: string,
  groupId: string,
  offsets: readonly OffsetToCommit[],
  answers: readonly CommitAnswer[],
): void {
  const refused = answers.filter((a) => a.errorCode !== KafkaErrorCode.NONE);
  const members = refused.find((a) => GROUP_HAS_MEMBERS.has(a.errorCode));
  if (members !== undefined) {
    const name = kafkaError(members.errorCode).name;
    throw new ReplicatorError(
      "GROUP_NOT_EMPTY",
      `${what} refused: the group has active members (coordinator answered ${name}); offsets can be set only while nobody is in the group`,
      { details: { groupId, kafkaErrorCode: members.errorCode, kafkaError: name } },
    );
  }
  const first = refused[0];
  if (first !== undefined) {
    throw groupRefusal(`${what} (${first.topic}/${first.partition})`, groupId, first.errorCode, {
      topic: first.topic,
      partition: first.partition,
      refused: refused.length,
    });
  }
  const answered = new Set(answers.map((a) => `${a.topic}\u0000${a.partition}`));
  const missing = offsets.find((o) => !answered.has(`${o.topic}\u0000${o.partition}`));
  if (missing !== undefined) {
    throw new ReplicatorError(
      "GROUP_ADMIN_FAILED",
      `${what}: no answer for ${missing.topic}/${missing.partition}`,
      {
        details: { groupId, topic: missing.topic, partition: missing.partition },
      },
    );
  }
}

function invalid(operation: string, argument: string, value: unknown, allowed: string): ReplicatorError {
  const shown = typeof value === "string" ? JSON.stringify(value) : String(value);
  return new ReplicatorError("CONFIG_INVALID", `${operation}: ${argument} must be ${allowed}, got ${shown}`, {
    details: { operation, argument, value },
  });
}

/** A group id must be a non-empty string: else CONFIG_INVALID naming `operation` (also used by test fakes). */
export function requireGroupId(operation: string, groupId: string): void {
  if (typeof groupId !== "string" || groupId.length === 0)
    throw invalid(operation, "groupId", groupId, "a non-empty string");
}

/** Bad offsets are a caller's bug: refused before anything is sent, naming the entry (also used by test fakes). */
export function requireOffsets(offsets: readonly OffsetToCommit[]): void {
  const seen = new Set<string>();
  offsets.forEach((o, i) => {
    if (typeof o.topic !== "string" || o.topic.length === 0)
      throw invalid("commitOffsets", `offsets[${i}].topic`, o.topic, "a non-empty string");
    if (!Number.isInteger(o.partition) || o.partition < 0 || o.partition > 2 ** 31 - 1)
      throw invalid("commitOffsets", `offsets[${i}].partition`, o.partition, "an integer 0..2147483647");
    if (!Number.isSafeInteger(o.offset) || o.offset < 0)
      throw invalid("commitOffsets", `offsets[${i}].offset`, o.offset, "a non-negative safe integer");
    const key = `${o.topic}\u0000${o.partition}`;
    if (seen.has(key))
      throw invalid(
        "commitOffsets",
        `offsets[${i}]`,
        `${o.topic}/${o.partition}`,
        "each partition at most once",
      );
    seen.add(key);
  });
}
