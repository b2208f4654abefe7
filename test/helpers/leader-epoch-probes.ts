// Probes for the leader epoch tests: one Fetch v11 or OffsetForLeaderEpoch v2 on a socket of its
// own (kafka-raw-requests.ts), carrying whatever current leader epoch the test names, so a test
// can show what a broker answers a stale epoch, or none, independently of the reader's routing.
// The bytes come from our encoders, pinned by test/unit/kafka/wire.
import type { TopicPartition } from "../../lib/core/model.js";
import { decodeFetchResponse, encodeFetchRequest, IsolationLevel } from "../../lib/kafka/wire/fetch.js";
import { offsetForLeaderEpochRequest } from "../../lib/kafka/wire/offset-for-leader-epoch.js";
import type { CapturingLogger } from "./fake-observability.js";
import { rawRequest } from "./kafka-raw-requests.js";

const FETCH = { apiKey: 1, version: 11 };
const OFFSET_FOR_LEADER_EPOCH = { apiKey: 23, version: 2 };

/** The partition's error code in a Fetch to `address` (`host:port`) at `offset`. */
export async function rawFetch(
  address: string,
  tp: TopicPartition,
  offset: number,
  currentLeaderEpoch: number,
): Promise<number> {
  const body = encodeFetchRequest({
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes: 1 << 20,
    isolationLevel: IsolationLevel.READ_UNCOMMITTED,
    topics: [
      {
        topic: tp.topic,
        partitions: [{ partition: tp.partition, currentLeaderEpoch, fetchOffset: offset, maxBytes: 1 << 20 }],
      },
    ],
  }).buffer;
  const answer = decodeFetchResponse((await rawRequest(address, FETCH.apiKey, FETCH.version, body)).rest());
  const partition = answer.topics[0]?.partitions[0];
  if (answer.errorCode !== 0 || partition === undefined) {
    throw new Error(`Fetch of ${tp.topic}/${tp.partition} from ${address}: error ${answer.errorCode}`);
  }
  return partition.errorCode;
}

/** The partition's error code in an OffsetForLeaderEpoch for `leaderEpoch` to `address`. */
export async function rawOffsetForLeaderEpoch(
  address: string,
  tp: TopicPartition,
  currentLeaderEpoch: number,
  leaderEpoch: number,
): Promise<number> {
  const { version, apiKey } = OFFSET_FOR_LEADER_EPOCH;
  const { request, response } = offsetForLeaderEpochRequest(version, {
    ...tp,
    currentLeaderEpoch,
    leaderEpoch,
  });
  const body = (await request.encode()).buffer;
  const answer = await response.decode((await rawRequest(address, apiKey, version, body)).rest());
  if (answer === null) throw new Error(`OffsetForLeaderEpoch from ${address}: no answer for ${tp.topic}`);
  return answer.errorCode;
}

/** Why the reader's calls were re-routed, in order (the cluster client's debug lines). */
export function reroutes(logger: CapturingLogger): string[] {
  return logger
    .at("debug")
    .filter((e) => e.message.endsWith("re-routing after fresh metadata"))
    .map((e) => String(e.fields.error));
}
