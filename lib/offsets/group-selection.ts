/**
 * Which consumer groups' offsets are synced: `groups.whitelist` / `groups.blacklist`, whole-name
 * RE2 patterns compiled by the same rules as topic patterns (lib/topics/pattern.ts). Without a
 * whitelist no group is selected.
 */
import { ReplicatorError } from "../errors.js";
import { compileTopicPattern, type TopicMatcher } from "../topics/pattern.js";

export interface GroupSelector {
  isSelected(groupId: string): boolean;
}

/** Throws PATTERN_INVALID naming the field and pattern (the config schema refuses them earlier). */
export function createGroupSelector(
  options: { readonly whitelist?: string | undefined; readonly blacklist?: string | undefined },
  /** How the whitelist is named in an error (a config field, or a command-line option). */
  whitelistName = "groups.whitelist",
): GroupSelector {
  const whitelist = compile(whitelistName, options.whitelist);
  const blacklist = compile("groups.blacklist", options.blacklist);
  return {
    isSelected: (groupId) =>
      groupId !== "" && whitelist !== null && whitelist.test(groupId) && !(blacklist?.test(groupId) ?? false),
  };
}

function compile(field: string, pattern: string | undefined): TopicMatcher | null {
  if (pattern === undefined || pattern === "") return null;
  const compiled = compileTopicPattern(pattern);
  if (compiled.ok) return compiled.matcher;
  throw new ReplicatorError("PATTERN_INVALID", `${field}: ${compiled.reason}`, {
    details: { field, pattern, reason: compiled.reason },
  });
}
