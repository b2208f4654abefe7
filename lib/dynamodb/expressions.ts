/**
 * The lease store's conditions and changes (lib/core/lease) as DynamoDB expressions. DynamoDB
 * rejects a name or value an expression does not use, so the attribute maps are derived from
 * what was actually tested, set and removed, never listed by hand. Attribute names go through
 * ExpressionAttributeNames (`#owner`) so reserved words never bite; a condition's values are
 * numbered (`:c0`), an update's named after their attribute (`:owner`), so they never meet.
 */
import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import type { Condition, ConditionAttribute } from "../core/lease/model.js";
import { type AttributeName, type ItemChanges, KEY_ATTRIBUTE } from "../core/lease/table.js";
import { encodeValue, LEGACY_EPOCH_ATTRIBUTE, num } from "./lease-item.js";

export interface Expression {
  readonly expression: string;
  readonly names: Record<string, string>;
  readonly values: Record<string, AttributeValue>;
}

/** `condition` as a ConditionExpression with its names and values. */
export function conditionExpression(condition: Condition): Expression {
  const names: Record<string, string> = {};
  const values: Record<string, AttributeValue> = {};
  const name = (attribute: ConditionAttribute): string => {
    names[`#${attribute}`] = attribute === "key" ? KEY_ATTRIBUTE : attribute;
    return `#${attribute}`;
  };
  const value = (v: string | number): string => {
    const placeholder = `:c${Object.keys(values).length}`;
    values[placeholder] = typeof v === "string" ? { S: v } : num(v);
    return placeholder;
  };
  const text = (c: Condition): string => {
    switch (c.test) {
      case "equals":
        return `${name(c.attribute)} = ${value(c.value)}`;
      case "lessThan":
        return `${name(c.attribute)} < ${value(c.value)}`;
      case "greaterThan":
        return `${name(c.attribute)} > ${value(c.value)}`;
      case "absent":
        return `attribute_not_exists(${name(c.attribute)})`;
      // AND binds tighter than OR in DynamoDB: an OR is parenthesised so it can stand in an AND.
      case "allOf":
        return c.pieces.map(text).join(" AND ");
      case "anyOf":
        return `(${c.pieces.map(text).join(" OR ")})`;
    }
  };
  return { expression: text(condition), names, values };
}

/**
 * `changes` as an UpdateExpression. Writing `sourceEpoch` (set or removed) also removes the older
 * versions' epoch attribute, which could be stale and is never read (lease-item.ts).
 */
export function updateExpression(changes: ItemChanges): Expression {
  const set = Object.entries(changes.set).filter(([, v]) => v !== undefined) as [AttributeName, never][];
  const remove: string[] = [...changes.remove];
  if ("sourceEpoch" in changes.set || changes.remove.includes("sourceEpoch"))
    remove.push(LEGACY_EPOCH_ATTRIBUTE);
  const clauses = [
    ...(set.length === 0 ? [] : [`SET ${set.map(([a]) => `#${a} = :${a}`).join(", ")}`]),
    ...(remove.length === 0 ? [] : [`REMOVE ${remove.map((a) => `#${a}`).join(", ")}`]),
  ];
  return {
    expression: clauses.join(" "),
    names: Object.fromEntries([...set.map(([a]) => a), ...remove].map((a) => [`#${a}`, a])),
    values: Object.fromEntries(set.map(([a, v]) => [`:${a}`, encodeValue(a, v)])),
  };
}
