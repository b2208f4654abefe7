/**
 * DynamoDB conditions built from pieces, as Powertools builds its idempotency conditions: each
 * piece carries its expression text, the ExpressionAttributeNames and Values it uses, and the same
 * test on a lease in memory. What DynamoDB enforces and what the loss diagnosis and the in-memory
 * store (test/helpers/fakes.ts) apply are then written once, side by side, and cannot drift apart.
 * The named pieces the lease store uses are in lease-conditions.ts.
 */
import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { expressionNames, num } from "./lease-item.js";

/** The attributes a condition tests. */
export type ConditionAttr =
  | "key"
  | "owner"
  | "counter"
  | "expiresAt"
  | "checkpoint"
  | "handoffTo"
  | "workerId";

/**
 * An item as the in-memory store keeps it: a Lease, a worker item or the leader item. Its key is
 * implied (an item that exists has one).
 */
export type ConditionSubject = { readonly [A in Exclude<ConditionAttr, "key">]?: string | number | null };

export interface Condition {
  readonly expression: string;
  readonly names: Readonly<Record<string, string>>;
  readonly values: Readonly<Record<string, AttributeValue>>;
  /** DynamoDB's answer for this item; `undefined` is a missing item (every attribute absent). */
  holds(item: ConditionSubject | undefined): boolean;
}

/** The stored value of `attr`, null when the attribute (or the whole item) is absent. */
function stored(item: ConditionSubject | undefined, attr: ConditionAttr): string | number | null {
  if (item === undefined) return null;
  return attr === "key" ? "(present)" : (item[attr] ?? null);
}

function attributeValue(value: string | number): AttributeValue {
  return typeof value === "string" ? { S: value } : num(value);
}

/** `#attr = :placeholder`; false on an absent attribute, as in DynamoDB. */
export function equals(attr: ConditionAttr, placeholder: string, value: string | number): Condition {
  return {
    expression: `#${attr} = ${placeholder}`,
    names: expressionNames(attr),
    values: { [placeholder]: attributeValue(value) },
    holds: (item) => stored(item, attr) === value,
  };
}

/** `#attr < :placeholder`; false on an absent attribute. */
export function lessThan(attr: ConditionAttr, placeholder: string, value: number): Condition {
  return compare(attr, "<", placeholder, value, (v) => v < value);
}

/** `#attr > :placeholder`; false on an absent attribute. */
export function greaterThan(attr: ConditionAttr, placeholder: string, value: number): Condition {
  return compare(attr, ">", placeholder, value, (v) => v > value);
}

function compare(
  attr: ConditionAttr,
  operator: "<" | ">",
  placeholder: string,
  value: number,
  test: (stored: number) => boolean,
): Condition {
  return {
    expression: `#${attr} ${operator} ${placeholder}`,
    names: expressionNames(attr),
    values: { [placeholder]: num(value) },
    holds: (item) => {
      const v = stored(item, attr);
      return typeof v === "number" && test(v);
    },
  };
}

/** `attribute_not_exists(#attr)`; true on a missing item. */
export function absent(attr: ConditionAttr): Condition {
  return {
    expression: `attribute_not_exists(#${attr})`,
    names: expressionNames(attr),
    values: {},
    holds: (item) => stored(item, attr) === null,
  };
}

/** Every piece holds. AND binds tighter than OR in DynamoDB, so no parentheses are needed. */
export function allOf(...pieces: readonly Condition[]): Condition {
  return {
    ...merged(pieces, " AND "),
    holds: (item) => pieces.every((p) => p.holds(item)),
  };
}

/** At least one piece holds; parenthesised so it can stand inside allOf. */
export function anyOf(...pieces: readonly Condition[]): Condition {
  const { expression, names, values } = merged(pieces, " OR ");
  return { expression: `(${expression})`, names, values, holds: (item) => pieces.some((p) => p.holds(item)) };
}

function merged(pieces: readonly Condition[], joiner: string): Omit<Condition, "holds"> {
  return {
    expression: pieces.map((p) => p.expression).join(joiner),
    names: Object.assign({}, ...pieces.map((p) => p.names)),
    values: Object.assign({}, ...pieces.map((p) => p.values)),
  };
}
