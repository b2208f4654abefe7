/**
 * The CLI config a deployed stack hands its operator (a stack Output): the functions' own config
 * (KafkaReplicator.config) as one line of YAML, so `kafka-mirror status`, `offsets` and
 * `failover` read the same lease table, clusters, alias and patterns as the functions:
 *
 *   {source: {brokers: 'b-1:9096', alias: 'idc1', tls: 'true', ...}, ..., leases: {table: '...'}}
 *
 * Values are single-quoted YAML scalars: no escape sequences, so a regex's backslashes stay as
 * they are, and a quote is doubled, by Fn::Split and Fn::Join for a value known only at deploy
 * time. A field left empty is left out, as the functions' loader leaves an empty variable unset;
 * for a parameter that may be empty, under a condition that it is set.
 */
import { Fn, Token } from "aws-cdk-lib";
import type { Construct } from "constructs";
import { configSections, type FunctionConfig } from "./kafka-replicator.js";
import { secretIsSet } from "./replicator-grants.js";

/** `'value'`, its quotes doubled: at synth for a concrete value, at deploy for a token. */
export function yamlQuoted(value: string): string {
  if (!Token.isUnresolved(value)) return `'${value.replaceAll("'", "''")}'`;
  return Fn.join("", ["'", Fn.join("''", Fn.split("'", value)), "'"]);
}

/** One line of YAML flow mappings; `scope` holds the "is set" conditions of values that may be empty. */
export function cliConfigYaml(scope: Construct, config: FunctionConfig): string {
  const sections = configSections(config).map(([section, fields]) => {
    const entries = Object.entries(fields)
      .filter(([, value]) => value !== "")
      .map(([key, value], i) => {
        const entry = `${i === 0 ? "" : ", "}${key}: ${yamlQuoted(value)}`;
        const setCondition = MAY_BE_EMPTY[key];
        if (!Token.isUnresolved(value) || setCondition === undefined) return entry;
        // A section's first field carries no separator, so it cannot be the one left out.
        if (i === 0) throw new Error(`cli-config: ${section}.${key} may be empty and must not come first`);
        const condition = setCondition(scope, capitalized(section), value);
        return Token.asString(Fn.conditionIf(condition.logicalId, entry, ""));
      });
    return `${section}: {${entries.join("")}}`;
  });
  return `{${sections.join(", ")}}`;
}

/**
 * Fields whose empty parameter the config refuses rather than reads as unset, with the condition
 * that one is set (the grants' own). An empty pattern is read as none; a mechanism parameter is
 * never empty (AllowedValues).
 */
const MAY_BE_EMPTY: Readonly<Record<string, typeof secretIsSet>> = { secretArn: secretIsSet };

function capitalized(word: string): string {
  return `${word.charAt(0).toUpperCase()}${word.slice(1)}`;
}
