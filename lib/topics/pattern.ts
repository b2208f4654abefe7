/**
 * Whole-name topic patterns, as MirrorMaker's `--whitelist` means them: `BIN` selects the topic
 * `BIN` and not `BIN-BI-TOPIC`.
 *
 * Patterns are JavaScript regular expressions without flags. Java-only syntax (inline flags
 * such as `(?i)`, possessive quantifiers `a*+`) is refused when the config is parsed rather
 * than being misread at run time.
 *
 * MirrorMaker 1 rewrote every `,` to `|`. We do not: the rewrite silently breaks quantifiers
 * such as `{1,3}`, and a pattern that means something else than it says is worse than one
 * that is refused. Since Kafka topic names cannot contain `,`, a comma outside a character
 * class or a `{m,n}` quantifier can only be that legacy form, so it is refused with the `|`
 * spelling to use instead.
 */

export type PatternCompilation = { ok: true; regex: RegExp } | { ok: false; reason: string };

export function compileTopicPattern(pattern: string): PatternCompilation {
  const syntax = regexSyntaxError(pattern);
  if (syntax !== null) return { ok: false, reason: `invalid regular expression "${pattern}": ${syntax}` };
  const legacy = replaceLegacyCommas(pattern);
  if (legacy !== pattern) {
    return {
      ok: false,
      reason:
        `"${pattern}" uses "," as a separator (MirrorMaker 1's legacy form); topic names cannot ` +
        `contain ",", so write the alternatives with "|": "${legacy}"`,
    };
  }
  // A non-capturing group, not `^pattern$`: `^A|B$` would be `(^A)|(B$)` and select `xB`.
  return { ok: true, regex: new RegExp(`^(?:${pattern})$`) };
}

function regexSyntaxError(pattern: string): string | null {
  try {
    new RegExp(pattern);
    // The anchored form is what runs; compiling it too means nothing can escape the group.
    new RegExp(`^(?:${pattern})$`);
    return null;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // V8 says "Invalid regular expression: /<pattern>/: <reason>"; keep only the reason.
    const reason = message.lastIndexOf(": ");
    return reason === -1 ? message : message.slice(reason + 2);
  }
}

/** `pattern` with every comma that is not escaped, in a class or in a quantifier turned into `|`. */
function replaceLegacyCommas(pattern: string): string {
  let out = "";
  let inClass = false;
  let inQuantifier = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern.charAt(i);
    if (c === "\\") {
      out += pattern.slice(i, i + 2);
      i++;
      continue;
    }
    if (inClass) {
      if (c === "]") inClass = false;
    } else if (inQuantifier) {
      if (c === "}") inQuantifier = false;
    } else if (c === "[") {
      inClass = true;
    } else if (c === "{") {
      inQuantifier = true;
    } else if (c === ",") {
      out += "|";
      continue;
    }
    out += c;
  }
  return out;
}
