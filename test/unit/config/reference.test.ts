import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { envVariableName } from "../../../lib/config/load.js";
import { configReference } from "../../../lib/config/reference.js";
import { replaceReferenceBlock } from "../../../lib/config/reference-table.js";
import { CONFIG_FIELDS } from "../../../lib/config/schema.js";

const README = readFileSync(
  join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "README.md"),
  "utf8",
);
const fieldPaths = Object.entries(CONFIG_FIELDS).flatMap(([s, keys]) => keys.map((k) => `${s}.${k}`));

describe("configReference", () => {
  it("lists every schema field once, with its variable and a description", () => {
    const reference = configReference();

    assert.deepEqual(
      reference.map((f) => f.path),
      fieldPaths,
    );
    for (const f of reference) {
      assert.equal(f.variable, envVariableName(f.section, f.key));
      assert.ok(f.description.length > 10, `${f.path} has no .describe() text`);
    }
  });

  it("knows the required fields and the defaults a parse fills in", () => {
    const reference = configReference();
    const byPath = new Map(reference.map((f) => [f.path, f]));

    assert.deepEqual(
      reference.filter((f) => f.required).map((f) => f.path),
      ["source.brokers", "target.brokers", "topics.whitelist"],
    );
    assert.equal(byPath.get("leases.durationMs")?.default, 60_000);
    assert.equal(byPath.get("target.requestTimeoutMs")?.default, 15_000);
    assert.equal(byPath.get("source.requestTimeoutMs")?.default, 30_000);
    assert.equal(byPath.get("worker.id")?.default, undefined);
  });
});

describe("the README's field tables", () => {
  it("the field reference is the schema's (run `npm run docs:config` after changing the schema)", () => {
    assert.equal(README, replaceReferenceBlock(README), "README.md's config-reference block is stale");
  });

  it("the Configuration table names only fields the schema has", () => {
    const table = README.slice(README.indexOf("| Field | Default | Meaning |"));
    const rows = table.slice(0, table.indexOf("\n\n")).split("\n").slice(2);
    assert.ok(rows.length > 10);
    const named = rows.flatMap((row) => {
      const first = row.split(" | ")[0] ?? "";
      let section = "";
      return [...first.matchAll(/`([a-zA-Z.]+)`/g)].map(([, name = ""]) => {
        if (name.includes(".")) section = name.slice(0, name.indexOf("."));
        return name.includes(".") ? name : `${section}.${name}`;
      });
    });

    const unknown = named.filter((name) => !fieldPaths.includes(name));
    assert.deepEqual(unknown, [], "README names fields the schema does not have");
  });
});
