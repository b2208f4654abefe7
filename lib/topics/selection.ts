/**
 * Which source topics are mirrored and under which target name.
 *
 * A topic is selected when, in this order, it is not internal (`__*`), not kafka-mirror's own
 * (`kafka-mirror.*`), matches the whitelist as a whole name, does not match the blacklist
 * (the blacklist wins), is not a cycle, and its target name is a topic name Kafka accepts.
 * Without a whitelist nothing is selected: mirroring every topic must be asked for (`.*`).
 *
 * Cycles (prefix rename only; with `identity` names carry no provenance): in an active-active
 * pair A⇄B, A→B writes `orders` as `A.orders` on B and B→A would write it back as `B.A.orders`
 * on A, then `A.B.A.orders` on B, and so on until names outgrow Kafka's limit. A topic whose
 * name says it already passed through the source cluster (`A.` on A, or `B.A.orders`) or the
 * target cluster (when its alias is known) is therefore skipped as a cycle; see
 * `hasPassedThrough` for the rule and its blind spot.
 *
 * A target name Kafka would refuse (over 249 characters, illegal characters) or that falls in
 * kafka-mirror's reserved namespace is not mangled into something else: the topic is skipped
 * with the reason, so `plan` shows it and the operator chooses (shorter alias, blacklist).
 */
import type { TopicMapping } from "../core/ports.js";
import { ReplicatorError } from "../errors.js";
import { isInternalTopic, isReservedTopic, RESERVED_TOPIC_PREFIX, topicNameProblem } from "./names.js";
import { compileTopicPattern, nearMiss, type TopicMatcher } from "./pattern.js";
import { hasPassedThrough, type RenameMode, renameTopic } from "./rename.js";

export interface TopicSelectorOptions {
  /** Whole-name regular expression of the topics to mirror; absent selects nothing. */
  readonly whitelist?: string | undefined;
  /** Whole-name regular expression of topics never to mirror, even when whitelisted. */
  readonly blacklist?: string | undefined;
  readonly rename: RenameMode;
  /** Alias of the source cluster: the prefix of `prefix` renames. */
  readonly sourceAlias: string;
  /** Alias of the target cluster, when it is itself mirrored back; topics from it are not returned. */
  readonly targetAlias?: string | undefined;
}

export type SkipReason =
  | "internal"
  | "reserved"
  | "not-whitelisted"
  | "blacklisted"
  | "cycle"
  | "invalid-target-name";

export type TopicDecision =
  | { readonly selected: true; readonly source: string; readonly target: string }
  | {
      readonly selected: false;
      readonly topic: string;
      readonly reason: SkipReason;
      readonly message: string;
    };

/** A TopicMapping that can also say why a topic is skipped. */
export interface TopicSelector extends TopicMapping {
  decide(sourceTopic: string): TopicDecision;
}

/** Near misses named in an empty selection's explanation, at most. */
const NEAR_MISSES_SHOWN = 5;

export interface TopicSelection {
  /** Sorted by source name. */
  readonly selected: { source: string; target: string }[];
  /** Sorted by topic name. */
  readonly skipped: { topic: string; reason: SkipReason; message: string }[];
}

/**
 * Throws PATTERN_INVALID (details: field, pattern, reason) when a pattern does not compile;
 * the config schema refuses such patterns earlier, this guards direct callers.
 */
export function createTopicSelector(options: TopicSelectorOptions): TopicSelector {
  const whitelist = compileOptional("whitelist", options.whitelist);
  const blacklist = compileOptional("blacklist", options.blacklist);
  const { rename, sourceAlias, targetAlias } = options;

  const decide = (topic: string): TopicDecision => {
    const skip = (reason: SkipReason, message: string): TopicDecision => ({
      selected: false,
      topic,
      reason,
      message,
    });
    if (isInternalTopic(topic)) return skip("internal", "Kafka internal topic (name starts with __)");
    if (isReservedTopic(topic)) {
      return skip("reserved", `kafka-mirror's own topic (name starts with ${RESERVED_TOPIC_PREFIX})`);
    }
    if (whitelist === undefined) return skip("not-whitelisted", "no whitelist is configured");
    if (!whitelist.test(topic)) return skip("not-whitelisted", "does not match the whitelist");
    if (blacklist?.test(topic)) return skip("blacklisted", "matches the blacklist");
    if (rename === "prefix") {
      if (hasPassedThrough(topic, sourceAlias)) {
        return skip("cycle", `name says it is already a copy of source cluster "${sourceAlias}"`);
      }
      if (targetAlias !== undefined && hasPassedThrough(topic, targetAlias)) {
        return skip("cycle", `name says it is a copy of target cluster "${targetAlias}"`);
      }
    }
    const target = renameTopic(topic, rename, sourceAlias);
    const problem = topicNameProblem(target);
    if (problem !== null) return skip("invalid-target-name", `target name "${target}" ${problem}`);
    if (isReservedTopic(target)) {
      return skip("invalid-target-name", `target name "${target}" is in kafka-mirror's reserved namespace`);
    }
    return { selected: true, source: topic, target };
  };

  return {
    decide,
    whyNothingSelected: (topics) => whyNothingSelected(options, decide, topics),
    isSelected: (topic) => decide(topic).selected,
    targetTopic: (topic) => {
      const decision = decide(topic);
      if (decision.selected) return decision.target;
      // Asking for the target of a skipped topic is a caller bug or a config that changed
      // under a running worker; either way, writing under some other name is not an option.
      throw new ReplicatorError("CONFIG_INVALID", `topic "${topic}" is not mirrored: ${decision.message}`, {
        details: { topic, reason: decision.reason },
      });
    },
  };
}

/**
 * Why none of `topics` (the source's) is selected, for an operator who expects something: how
 * many were listed, why they were skipped, and the names the whitelist nearly matches (letter
 * case, only a prefix or a part of the name).
 */
function whyNothingSelected(
  options: TopicSelectorOptions,
  decide: (topic: string) => TopicDecision,
  topics: readonly string[],
): string {
  const { whitelist } = options;
  const candidates = [...new Set(topics)]
    .filter((t) => !isInternalTopic(t) && !isReservedTopic(t))
    .sort(compareNames);
  const head =
    whitelist === undefined || whitelist === ""
      ? "no topics.whitelist is configured"
      : `topics.whitelist "${whitelist}" selects none of the ${candidates.length} topic(s) on the source`;
  const reasons = new Map<string, number>();
  for (const topic of candidates) {
    const decision = decide(topic);
    if (!decision.selected && decision.reason !== "not-whitelisted") {
      reasons.set(decision.reason, (reasons.get(decision.reason) ?? 0) + 1);
    }
  }
  const skipped = [...reasons].map(([reason, n]) => `${n} ${reason}`).join(", ");
  const near =
    whitelist === undefined || whitelist === ""
      ? []
      : candidates.flatMap((t) => {
          const miss = nearMiss(whitelist, t);
          return miss === null
            ? []
            : [
                `"${t}" (${miss === "part" ? "matches only part of the name" : miss === "case" ? "differs in letter case" : "matches only its beginning"})`,
              ];
        });
  return [
    head,
    skipped === "" ? "" : `; skipped: ${skipped}`,
    near.length === 0
      ? ""
      : `; near misses: ${near.slice(0, NEAR_MISSES_SHOWN).join(", ")}${near.length > NEAR_MISSES_SHOWN ? `, and ${near.length - NEAR_MISSES_SHOWN} more` : ""}`,
    candidates.length === 0
      ? ""
      : near.length === 0
        ? `; e.g. ${candidates
            .slice(0, 3)
            .map((t) => `"${t}"`)
            .join(", ")}`
        : "",
  ].join("");
}

/** Decides every topic once (duplicates dropped) and sorts both lists for stable output. */
export function selectTopics(mapping: TopicSelector, topicNames: Iterable<string>): TopicSelection {
  const selected: TopicSelection["selected"] = [];
  const skipped: TopicSelection["skipped"] = [];
  for (const topic of new Set(topicNames)) {
    const decision = mapping.decide(topic);
    if (decision.selected) selected.push({ source: decision.source, target: decision.target });
    else skipped.push({ topic: decision.topic, reason: decision.reason, message: decision.message });
  }
  selected.sort((a, b) => compareNames(a.source, b.source));
  skipped.sort((a, b) => compareNames(a.topic, b.topic));
  return { selected, skipped };
}

/** Code-unit order, not localeCompare: the same output whatever the machine's locale. */
function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function compileOptional(
  field: "whitelist" | "blacklist",
  pattern: string | undefined,
): TopicMatcher | undefined {
  if (pattern === undefined) return undefined;
  const compiled = compileTopicPattern(pattern);
  if (compiled.ok) return compiled.matcher;
  throw new ReplicatorError("PATTERN_INVALID", `topics.${field}: ${compiled.reason}`, {
    details: { field: `topics.${field}`, pattern, reason: compiled.reason },
  });
}
