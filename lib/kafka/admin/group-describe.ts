/**
 * Describing groups of both rebalance protocols on their coordinator. DescribeGroups knows only
 * classic groups: Kafka 4 answers a KIP-848 group there as Dead with no members even while
 * consumers are in it (seen on Kafka 4.1.2 at v2), so alone it made "never commit to a group with
 * members" blind to them. ConsumerGroupDescribe (API 69) is asked first, as Kafka's own admin
 * client does; the ids it does not know (GROUP_ID_NOT_FOUND: classic groups and unknown ids) then
 * go to DescribeGroups. A broker that does not offer API 69 has no KIP-848 groups.
 *
 * A group that changes protocol between the two requests (a classic group upgraded by its first
 * KIP-848 member) can come back Dead; the coordinator still refuses an admin commit to a group
 * with members then (GROUP_NOT_EMPTY), which is why the sync treats that refusal like a member.
 */
import type { GroupDescription } from "../../core/ports.js";
import type { Broker, KafkaClusterClient } from "../wire/cluster-client.js";
import {
  CONSUMER_GROUP_DESCRIBE,
  decodeConsumerGroupDescribeResponse,
  encodeConsumerGroupDescribeRequest,
} from "../wire/consumer-group-describe.js";
import { KafkaErrorCode } from "../wire/error-codes.js";
import { DESCRIBE_GROUPS, describeGroupsRequest } from "../wire/groups.js";
import { groupRefusal, q } from "./group-refusal.js";

/** Every id of `groupIds` (all coordinated by `broker`) that the coordinator answered for. */
export async function describeOnCoordinator(
  client: KafkaClusterClient,
  broker: Broker,
  groupIds: readonly string[],
): Promise<GroupDescription[]> {
  const consumer = await describeConsumerGroups(client, broker, groupIds);
  const rest = groupIds.filter((id) => !consumer.has(id));
  const classic = rest.length === 0 ? [] : await describeClassicGroups(client, broker, rest);
  return [...consumer.values(), ...classic];
}

/** The KIP-848 groups among `groupIds`, by id; none when the broker does not offer API 69. */
async function describeConsumerGroups(
  client: KafkaClusterClient,
  broker: Broker,
  groupIds: readonly string[],
): Promise<Map<string, GroupDescription>> {
  const { apiName, apiKey, versions } = CONSUMER_GROUP_DESCRIBE;
  const apiVersion = client.supported(broker, apiKey, versions);
  const found = new Map<string, GroupDescription>();
  if (apiVersion === undefined) return found;
  const answer = await client.sendBody(
    broker,
    { apiName, apiKey, apiVersion },
    encodeConsumerGroupDescribeRequest(groupIds),
    (payload) => decodeConsumerGroupDescribeResponse(apiVersion, payload),
  );
  for (const g of answer) {
    if (g.errorCode === KafkaErrorCode.GROUP_ID_NOT_FOUND) continue;
    if (g.errorCode !== KafkaErrorCode.NONE)
      throw groupRefusal(`describing group ${q(g.groupId)}`, g.groupId, g.errorCode);
    found.set(g.groupId, { groupId: g.groupId, state: g.state, members: g.members.length, type: "consumer" });
  }
  return found;
}

async function describeClassicGroups(
  client: KafkaClusterClient,
  broker: Broker,
  groupIds: readonly string[],
): Promise<GroupDescription[]> {
  const described = await client.request(broker, DESCRIBE_GROUPS, (v) => describeGroupsRequest(v, groupIds));
  return described.map((g) => {
    if (g.errorCode !== KafkaErrorCode.NONE)
      throw groupRefusal(`describing group ${q(g.groupId)}`, g.groupId, g.errorCode);
    return { groupId: g.groupId, state: g.state, members: g.members.length, type: "classic" };
  });
}
