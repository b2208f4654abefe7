/**
 * Builds one conditional UpdateItem on a lease item: what it sets and removes, and the condition
 * (lease-conditions.ts) it is written under. DynamoDB rejects a name or value an expression does
 * not use, so the expression attribute maps are derived from what was actually set, removed and
 * tested, never listed by hand.
 */
import type { AttributeValue, UpdateItemCommandInput } from "@aws-sdk/client-dynamodb";
import type { Condition } from "./condition.js";
import { type Attr, expressionNames, num } from "./lease-item.js";

type Attribute = Exclude<keyof typeof Attr, "key" | "topic" | "partition">;

/** The parts of an UpdateItemCommandInput that say what to write and when. */
export type UpdateParts = Required<
  Pick<
    UpdateItemCommandInput,
    "UpdateExpression" | "ConditionExpression" | "ExpressionAttributeNames" | "ExpressionAttributeValues"
  >
>;

export class LeaseUpdate {
  readonly #set = new Map<Attribute, AttributeValue>();
  readonly #remove = new Set<Attribute>();
  readonly #condition: Condition;

  /** Every lease write decides ownership or progress, so none is built without a condition. */
  constructor(condition: Condition) {
    this.#condition = condition;
  }

  /** `SET #attr = :attr`. */
  set(attr: Attribute, value: string | number): this {
    this.#set.set(attr, typeof value === "string" ? { S: value } : num(value));
    return this;
  }

  /** `REMOVE #attr`. */
  remove(...attrs: readonly Attribute[]): this {
    for (const attr of attrs) this.#remove.add(attr);
    return this;
  }

  build(): UpdateParts {
    const set = [...this.#set.keys()].map((a) => `#${a} = :${a}`);
    const remove = [...this.#remove].map((a) => `#${a}`);
    const clauses = [
      ...(set.length === 0 ? [] : [`SET ${set.join(", ")}`]),
      ...(remove.length === 0 ? [] : [`REMOVE ${remove.join(", ")}`]),
    ];
    const written = [...this.#set.keys(), ...this.#remove];
    return {
      UpdateExpression: clauses.join(" "),
      ConditionExpression: this.#condition.expression,
      ExpressionAttributeNames: {
        ...this.#condition.names,
        ...expressionNames(...written),
      },
      ExpressionAttributeValues: {
        ...this.#condition.values,
        ...Object.fromEntries([...this.#set].map(([a, value]) => [`:${a}`, value])),
      },
    };
  }
}
