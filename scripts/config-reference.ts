// `npm run docs:config`: writes the README's field reference (between the config-reference
// markers) from the schema. test/unit/config/reference.test.ts fails when the README is stale.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { replaceReferenceBlock } from "../lib/config/reference-table.js";

const readme = join(dirname(fileURLToPath(import.meta.url)), "..", "README.md");
writeFileSync(readme, replaceReferenceBlock(readFileSync(readme, "utf8")));
