/**
 * IncrementalAlterConfigs (KIP-339) for TOPIC resources, SET operations only: v1 is flexible
 * (laid out with flexible.ts and sent as a body), v0 the same fields in classic encoding. kafkajs
 * 2.2.4 has only AlterConfigs, which replaces a topic's whole config set: every setting not in the
 * request goes back to its default, so a setting that exists only on the target would be lost.
 */

import { FlexReader, FlexWriter } from "./flexible.js";
import { Decoder, Encoder, type KafkajsCall } from "./kafkajs-internals.js";

export const INCREMENTAL_ALTER_CONFIGS_API = {
  apiName: "IncrementalAlterConfigs",
  apiKey: 44,
  versions: [1, 0],
} as const;

/** The first flexible version. */
export const INCREMENTAL_ALTER_CONFIGS_FLEX_VERSION = 1;

const TOPIC_RESOURCE = 2;
const OP_SET = 0;

export interface TopicConfigSet {
  readonly topic: string;
  readonly set: ReadonlyMap<string, string>;
}

export interface AlterResult {
  readonly errorCode: number;
  readonly errorMessage: string | null;
  readonly resourceType: number;
  readonly name: string;
}

/** v1's body: request header tags first (kafkajs writes the header up to the client id). */
export function encodeFlexibleAlter(changes: readonly TopicConfigSet[]): Buffer {
  const w = new FlexWriter().noTags().uvarint(changes.length + 1);
  for (const change of changes) {
    w.int8(TOPIC_RESOURCE)
      .compactString(change.topic)
      .uvarint(change.set.size + 1);
    for (const [name, value] of change.set) w.compactString(name).int8(OP_SET).compactString(value).noTags();
    w.noTags();
  }
  return w.int8(0).noTags().toBuffer(); // validate_only
}

export function decodeFlexibleAlter(payload: Buffer): AlterResult[] {
  const r = new FlexReader(payload);
  r.skipTags(); // response header v1
  r.int32(); // throttle_time_ms
  const results = r.compactArray((e) => {
    const errorCode = e.int16();
    const errorMessage = e.compactString();
    const resourceType = e.int8();
    const name = e.compactString() ?? "";
    e.skipTags();
    return { errorCode, errorMessage, resourceType, name };
  });
  r.skipTags();
  return results;
}

/** v0, through kafkajs's request path. */
export function classicAlterRequest(changes: readonly TopicConfigSet[]): KafkajsCall<AlterResult[]> {
  return {
    request: {
      apiKey: INCREMENTAL_ALTER_CONFIGS_API.apiKey,
      apiVersion: 0,
      apiName: INCREMENTAL_ALTER_CONFIGS_API.apiName,
      encode: async () =>
        new Encoder()
          .writeArray(
            changes.map((c) =>
              new Encoder()
                .writeInt8(TOPIC_RESOURCE)
                .writeString(c.topic)
                .writeArray(
                  [...c.set].map(([name, value]) =>
                    new Encoder().writeString(name).writeInt8(OP_SET).writeString(value),
                  ),
                ),
            ),
          )
          .writeInt8(0), // validate_only
    },
    response: {
      decode: async (payload) => {
        const d = new Decoder(payload);
        d.readInt32(); // throttle_time_ms
        return d.readArray((e) => ({
          errorCode: e.readInt16(),
          errorMessage: e.readString(),
          resourceType: e.readInt8(),
          name: e.readString() ?? "",
        }));
      },
      // Per-resource errors are the admin's to judge.
      parse: async (decoded) => decoded,
    },
  };
}
