/**
 * DescribeConfigs v1-v2 (non-flexible) for TOPIC and BROKER resources. v1 is the first version
 * that says where each value comes from (config_source); v0's is_default cannot tell a topic
 * override from a broker-wide one. kafkajs 2.2.4's parser throws when any resource failed, so one
 * missing topic would hide the others' answers.
 */
import { Decoder, Encoder, type KafkajsCall, type KafkajsDecoder } from "./kafkajs-internals.js";

export const DESCRIBE_CONFIGS_API = {
  apiName: "DescribeConfigs",
  apiKey: 32,
  versions: [2, 1],
} as const;

/** Kafka's ConfigResource.Type ids. */
export const ConfigResourceType = {
  TOPIC: 2,
  BROKER: 4,
} as const;

/** One resource to describe: all its configs, or only those named. */
export interface ConfigResource {
  readonly type: number;
  /** A topic name, or a broker's id as a string (that broker must answer: Kafka refuses others). */
  readonly name: string;
  /** Null: every config. */
  readonly configNames: readonly string[] | null;
}

/** Kafka's ConfigSource ids (DescribeConfigsResponse.ConfigSource). */
export const ConfigSource = {
  UNKNOWN: 0,
  DYNAMIC_TOPIC_CONFIG: 1,
  DYNAMIC_BROKER_CONFIG: 2,
  DYNAMIC_DEFAULT_BROKER_CONFIG: 3,
  STATIC_BROKER_CONFIG: 4,
  DEFAULT_CONFIG: 5,
  DYNAMIC_BROKER_LOGGER_CONFIG: 6,
} as const;

export interface ConfigEntry {
  readonly name: string;
  /** Null for a sensitive value the broker does not reveal. */
  readonly value: string | null;
  readonly source: number;
}

export interface ResourceConfigs {
  readonly errorCode: number;
  readonly errorMessage: string | null;
  readonly resourceType: number;
  readonly name: string;
  readonly entries: readonly ConfigEntry[];
}

export function describeTopicConfigsRequest(
  version: number,
  topics: readonly string[],
): KafkajsCall<ResourceConfigs[]> {
  return describeConfigsRequest(
    version,
    topics.map((topic) => ({ type: ConfigResourceType.TOPIC, name: topic, configNames: null })),
  );
}

export function describeConfigsRequest(
  version: number,
  resources: readonly ConfigResource[],
): KafkajsCall<ResourceConfigs[]> {
  return {
    request: {
      apiKey: DESCRIBE_CONFIGS_API.apiKey,
      apiVersion: version,
      apiName: DESCRIBE_CONFIGS_API.apiName,
      encode: async () =>
        new Encoder()
          .writeArray(
            resources.map((r) => {
              const resource = new Encoder().writeInt8(r.type).writeString(r.name);
              // A null array (-1) asks for every config.
              return r.configNames === null ? resource.writeInt32(-1) : resource.writeArray(r.configNames);
            }),
          )
          .writeInt8(0), // include_synonyms
    },
    response: {
      decode: async (payload) => {
        const d = new Decoder(payload);
        d.readInt32(); // throttle_time_ms
        return d.readArray(decodeResource);
      },
      // Per-resource errors are the admin's to judge.
      parse: async (decoded) => decoded,
    },
  };
}

function decodeResource(r: KafkajsDecoder): ResourceConfigs {
  const errorCode = r.readInt16();
  const errorMessage = r.readString();
  const resourceType = r.readInt8();
  const name = r.readString() ?? "";
  const entries = r.readArray((e) => {
    const entryName = e.readString() ?? "";
    const value = e.readString();
    e.readInt8(); // read_only
    const source = e.readInt8();
    e.readInt8(); // is_sensitive
    e.readArray((s) => [s.readString(), s.readString(), s.readInt8()]); // synonyms (none asked for)
    return { name: entryName, value, source };
  });
  return { errorCode, errorMessage, resourceType, name, entries };
}
