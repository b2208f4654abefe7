/**
 * The structure checker (scripts/structure.ts, `npm run structure`) on small trees written for the
 * test: it finds a planted import cycle (type-only imports included) and each kind of layer break,
 * and passes the repository itself.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { checkStructure } from "../../../scripts/structure.js";

const made: string[] = [];
after(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A repository folder holding the given files (path -> text). */
function tree(files: Readonly<Record<string, string>>): string {
  const root = mkdtempSync(join(tmpdir(), "structure-"));
  made.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const CLEAN = {
  "lib/errors.ts": "export class ReplicatorError extends Error {}\n",
  "lib/core/model.ts": 'import { ReplicatorError } from "../errors.js";\nexport const e = ReplicatorError;\n',
  "lib/core/run/worker.ts": 'import { e } from "../model.js";\nexport const w = e;\n',
  "lib/kafka/read/reader.ts": 'import { e } from "../../core/model.js";\nexport const r = e;\n',
  "lib/cli/main.ts": 'import { r } from "../kafka/read/reader.js";\nexport const m = r;\n',
  "functions/replicate.ts": 'import { m } from "../lib/cli/main.js";\nexport const f = m;\n',
};

describe("checkStructure", () => {
  it("passes a tree whose imports point one way", () => {
    const report = checkStructure(tree(CLEAN));

    assert.deepEqual(report.cycles, []);
    assert.deepEqual(report.layerBreaks, []);
  });

  it("names a planted import cycle, also when one side imports only a type", () => {
    const root = tree({
      ...CLEAN,
      "lib/core/pump/a.ts": 'import { b } from "./b.js";\nexport const a = b;\nexport type A = number;\n',
      "lib/core/pump/b.ts": 'import type { A } from "./a.js";\nexport const b: A = 1;\n',
    });

    const report = checkStructure(root);

    assert.deepEqual(report.cycles, [["lib/core/pump/a.ts", "lib/core/pump/b.ts"]]);
  });

  it("names a core file that imports an adapter", () => {
    const root = tree({
      ...CLEAN,
      "lib/core/bad.ts": 'import { r } from "../kafka/read/reader.js";\nexport { r };\n',
    });

    const report = checkStructure(root);

    assert.deepEqual(report.layerBreaks, [
      "lib/core/bad.ts (core) imports lib/kafka/read/reader.ts (adapter)",
    ]);
  });

  it("names an adapter that imports another adapter", () => {
    const root = tree({
      ...CLEAN,
      "lib/dynamodb/store.ts": 'import { r } from "../kafka/read/reader.js";\nexport { r };\n',
    });

    const report = checkStructure(root);

    assert.deepEqual(report.layerBreaks, [
      "lib/dynamodb/store.ts (adapter lib/dynamodb) imports another adapter: lib/kafka/read/reader.ts",
    ]);
  });

  it("names a folder under lib/ that is in no layer", () => {
    const root = tree({ ...CLEAN, "lib/newthing/x.ts": "export const x = 1;\n" });

    const report = checkStructure(root);

    assert.match(report.layerBreaks.join("\n"), /lib\/newthing\/x\.ts is in no layer/);
  });

  it("finds no cycle and no layer break in this repository", () => {
    const repo = join(dirname(fileURLToPath(import.meta.url)), "../../..");

    const report = checkStructure(repo);

    assert.deepEqual(report.cycles, []);
    assert.deepEqual(report.layerBreaks, []);
    assert.deepEqual(report.sizes, []);
  });
});
