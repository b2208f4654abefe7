/**
 * The `topics` section of the config: which topics are mirrored, under which names, and how their
 * target copies are kept in line (discovery interval, config sync lists; lib/core/plan/config-sync.ts);
 * and the `groups` section, selected by the same pattern rules.
 */
import { DEFAULT_SYNCED_CONFIGS, neverSyncedReason } from "../core/plan/config-sync.js";
import { RENAME_MODES } from "../topics/rename.js";
import {
  configNameList,
  flag,
  integer,
  oneOf,
  requiredTopicPattern,
  section,
  topicPattern,
} from "./fields.js";

export const topicsSchema = section({
  whitelist: requiredTopicPattern("the topics to mirror").describe(
    'Whole-name regular expression of the topics to mirror; required: a mirror of nothing is a mistake to report, not a run to make (".*" mirrors every topic).',
  ),
  blacklist: topicPattern().describe(
    "Whole-name regular expression of topics never to mirror; wins over the whitelist.",
  ),
  rename: oneOf(RENAME_MODES)
    .default("identity")
    .describe("Target naming: `identity` keeps the name, `prefix` writes `<source.alias>.<topic>`."),
  discoveryIntervalMs: integer(1_000, 3_600_000)
    .default(10_000)
    .describe(
      "How often a running worker lists both clusters' topics to pick up new topics and partitions (and, with configSync, compares configs): one Metadata and one DescribeConfigs per cluster.",
    ),
  configSync: flag()
    .default(true)
    .describe(
      "Copy topic-level configs (configSyncAllow less configSyncDeny) on creation and keep them in sync.",
    ),
  configSyncAllow: configNameList()
    .default([...DEFAULT_SYNCED_CONFIGS])
    .describe("Config names copied; a list given here replaces the default list (README: Topics)."),
  configSyncDeny: configNameList().default([]).describe("Config names never copied, even when allowed."),
}).superRefine((topics, ctx) => {
  for (const [i, name] of topics.configSyncAllow.entries()) {
    const why = neverSyncedReason(name);
    if (why === null) continue;
    ctx.addIssue({
      code: "custom",
      path: ["configSyncAllow", i],
      input: name,
      message: `${name} is never copied (${why}); remove it from the list`,
    });
  }
});

/** Consumer groups whose committed offsets are translated and synced to the target (lib/offsets). */
export const groupsSchema = section({
  whitelist: topicPattern().describe(
    'Whole-name regular expression of group ids, rules as for topics; absent (or "") syncs none.',
  ),
  blacklist: topicPattern().describe(
    "Whole-name regular expression of group ids never synced; wins over the whitelist.",
  ),
});
