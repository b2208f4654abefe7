/**
 * How a source topic is named in the target cluster.
 * - `identity`: same name (MirrorMaker 1's behaviour).
 * - `prefix`: `<source alias>.<topic>` (MirrorMaker 2's default), so the copies of several
 *   clusters can live side by side and a name tells where its data came from.
 */
export const RENAME_MODES = ["identity", "prefix"] as const;

export type RenameMode = (typeof RENAME_MODES)[number];

/** The separator between an alias and the topic it prefixes, as in MirrorMaker 2. */
export const ALIAS_SEPARATOR = ".";

export function renameTopic(topic: string, mode: RenameMode, sourceAlias: string): string {
  return mode === "prefix" ? `${sourceAlias}${ALIAS_SEPARATOR}${topic}` : topic;
}

/**
 * Whether a prefixed name says its data passed through the cluster `alias`: `alias` is its
 * first segment or any later segment but the last (`B.A.orders` passed through A, then B).
 * The same walk MirrorMaker 2 does to detect cycles, with the same blind spot: a topic that
 * merely contains `.<alias>.` in its own name is taken for a copy.
 */
export function hasPassedThrough(topic: string, alias: string): boolean {
  return (
    topic.startsWith(`${alias}${ALIAS_SEPARATOR}`) ||
    topic.includes(`${ALIAS_SEPARATOR}${alias}${ALIAS_SEPARATOR}`)
  );
}
