/**
 * Whole-name topic patterns, as MirrorMaker's `--whitelist` means them: `BIN` selects the topic
 * `BIN` and not `BIN-BI-TOPIC`.
 *
 * A pattern must be a valid JavaScript regular expression without flags, and it is matched by
 * RE2 (re2js, its pure JavaScript port), whose time is linear in the name's length. A
 * backtracking engine takes exponential time on patterns such as `([A-Z]+-?)*-BI-TOPIC` (176 ms
 * on a 34-character name, x4 per two more characters): one such whitelist would hang every
 * worker. RE2 has no backreferences and no lookaround, so those are refused with a message
 * that says so.
 *
 * Java-only syntax (inline flags such as `(?i)`, possessive quantifiers `a*+`) is refused when
 * the config is parsed rather than being misread at run time.
 *
 * MirrorMaker 1 rewrote every `,` to `|`. We do not: the rewrite silently breaks quantifiers
 * such as `{1,3}`, and a pattern that means something else than it says is worse than one
 * that is refused. Since Kafka topic names cannot contain `,`, a comma outside a character
 * class or a `{m,n}` quantifier can only be that legacy form, so it is refused with the `|`
 * spelling to use instead.
 */
import { RE2JS, RE2JSSyntaxException } from "re2js";

/** A compiled whole-name pattern. */
export interface TopicMatcher {
  /** The pattern as configured. */
  readonly source: string;
  /** True when the whole topic name matches; linear in the name's length. */
  test(topicName: string): boolean;
}

export type PatternCompilation = { ok: true; matcher: TopicMatcher } | { ok: false; reason: string };

export function compileTopicPattern(pattern: string): PatternCompilation {
  const reason = patternProblem(pattern);
  if (reason !== null) return { ok: false, reason };
  const compiled = compileRe2(pattern);
  if (!compiled.ok) return compiled;
  const re2 = compiled.re2;
  // testExact is a whole-input match: the same as `^(?:pattern)$`, so `A|B` cannot select `xB`.
  return { ok: true, matcher: { source: pattern, test: (topicName) => re2.testExact(topicName) } };
}

/** How a name the pattern does not select comes close to it; "case" before "prefix" before "part". */
export type NearMiss = "case" | "prefix" | "part";

/**
 * Whether `pattern` (valid: compileTopicPattern accepted it) would select `topicName` but for
 * letter case, or matches only its beginning, or only a part of it. For "why does my whitelist
 * select nothing" hints; as linear as the match itself.
 */
export function nearMiss(pattern: string, topicName: string): NearMiss | null {
  if (RE2JS.compile(pattern, RE2JS.CASE_INSENSITIVE).matches(topicName)) return "case";
  const matcher = RE2JS.compile(pattern).matcher(topicName);
  if (matcher.lookingAt()) return "prefix";
  return matcher.find() ? "part" : null;
}

function patternProblem(pattern: string): string | null {
  const syntax = regexSyntaxError(pattern);
  // `(?i)orders` is no JavaScript regex either ("Invalid group"); name what it is instead.
  if (syntax !== null) {
    return `invalid regular expression "${pattern}": ${unsupportedConstruct(pattern) ?? syntax}`;
  }
  const legacy = replaceLegacyCommas(pattern);
  if (legacy !== pattern) {
    return (
      `"${pattern}" uses "," as a separator (MirrorMaker 1's legacy form); topic names cannot ` +
      `contain ",", so write the alternatives with "|": "${legacy}"`
    );
  }
  const unsupported = unsupportedConstruct(pattern);
  if (unsupported === null) return null;
  return `invalid regular expression "${pattern}": ${unsupported}`;
}

function regexSyntaxError(pattern: string): string | null {
  try {
    new RegExp(pattern);
    // Compiling the anchored form too means nothing can escape the group (`a)|(b`).
    new RegExp(`^(?:${pattern})$`);
    return null;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // V8 says "Invalid regular expression: /<pattern>/: <reason>"; keep only the reason.
    const reason = message.lastIndexOf(": ");
    return reason === -1 ? message : message.slice(reason + 2);
  }
}

const LINEAR_ENGINE = "topic patterns are matched by RE2, a linear-time engine";

/**
 * What JavaScript accepts but this engine must refuse, by name. Inline flags are checked here
 * and not left to the engine: RE2 accepts `(?i)`, and newer V8 accepts `(?i:...)`, but both are
 * Java/Perl spellings that MirrorMaker users carry over, and their meaning is not ours to guess.
 */
function unsupportedConstruct(pattern: string): string | null {
  for (const token of tokens(pattern)) {
    if (token.context === "class") continue;
    const rest = pattern.slice(token.index);
    if (/^\\[1-9]/.test(rest) || rest.startsWith("\\k<")) {
      return `backreferences (${token.text}) are not supported: ${LINEAR_ENGINE} without them`;
    }
    const look = /^\(\?(?:=|!|<=|<!)/.exec(rest);
    if (look !== null) return `lookaround (${look[0]}) is not supported: ${LINEAR_ENGINE} without it`;
    const flags = /^\(\?[a-zA-Z-]+[:)]/.exec(rest);
    if (flags !== null) return `inline flags (${flags[0]}) are Java/Perl syntax and are not supported`;
  }
  return null;
}

function compileRe2(pattern: string): { ok: true; re2: RE2JS } | { ok: false; reason: string } {
  try {
    return { ok: true, re2: RE2JS.compile(pattern) };
  } catch (error) {
    const detail =
      error instanceof RE2JSSyntaxException
        ? `${error.getDescription()}${error.getPattern() === null ? "" : ` at "${error.getPattern()}"`}`
        : String(error);
    return {
      ok: false,
      reason: `regular expression "${pattern}" is not supported: ${LINEAR_ENGINE}; ${detail}`,
    };
  }
}

interface Token {
  /** One character, or an escape and the character it escapes. */
  readonly text: string;
  readonly index: number;
  readonly context: "top" | "class" | "quantifier";
}

/** The pattern's characters with the context each is read in (escapes kept whole). */
function* tokens(pattern: string): Generator<Token> {
  let context: Token["context"] = "top";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern.charAt(i);
    if (c === "\\") {
      yield { text: pattern.slice(i, i + 2), index: i, context };
      i++;
      continue;
    }
    if (context === "top" && (c === "[" || c === "{")) {
      yield { text: c, index: i, context };
      context = c === "[" ? "class" : "quantifier";
      continue;
    }
    if ((context === "class" && c === "]") || (context === "quantifier" && c === "}")) context = "top";
    yield { text: c, index: i, context };
  }
}

/** `pattern` with every comma that is not escaped, in a class or in a quantifier turned into `|`. */
function replaceLegacyCommas(pattern: string): string {
  let out = "";
  for (const token of tokens(pattern))
    out += token.context === "top" && token.text === "," ? "|" : token.text;
  return out;
}
