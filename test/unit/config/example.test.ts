import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { CliError } from "../../../lib/cli/cli-error.js";
import { loadConfigFile } from "../../../lib/cli/config-file.js";
import { exampleConfigYaml } from "../../../lib/config/example.js";
import { CONFIG_FIELDS, parseConfig } from "../../../lib/config/schema.js";

/** The example with its commented-out required fields filled in, as the header asks. */
function filled(yaml: string): string {
  return yaml.replace(/^ {2}# (brokers|whitelist): /gm, "  $1: ");
}

describe("exampleConfigYaml", () => {
  it("writes every field of the schema, under its section", () => {
    const yaml = exampleConfigYaml();

    for (const [section, keys] of Object.entries(CONFIG_FIELDS)) {
      assert.match(yaml, new RegExp(`^${section}:$`, "m"));
      for (const key of keys) assert.match(yaml, new RegExp(`^ {2}(# )?${key}:`, "m"), `${section}.${key}`);
    }
  });

  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "kafka-mirror-example-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const load = async (name: string, yaml: string) => {
    await writeFile(join(dir, name), yaml);
    return loadConfigFile(join(dir, name), {});
  };

  it("as written, is refused by the CLI's loader naming exactly the three required fields", async () => {
    await assert.rejects(
      () => load("as-written.yaml", exampleConfigYaml()),
      (error: unknown) => {
        assert.ok(error instanceof CliError);
        const paths = error.message
          .split("\n")
          .slice(1)
          .map((line) => line.trim().split(":")[0]);
        assert.deepEqual(paths, ["source.brokers", "target.brokers", "topics.whitelist"]);
        return true;
      },
    );
  });

  it("once filled in, loads, and each value it writes is the default", async () => {
    const config = await load("filled.yaml", filled(exampleConfigYaml()));

    const required = {
      source: { brokers: config.source.brokers },
      target: { brokers: config.target.brokers },
      topics: { whitelist: config.topics.whitelist },
    };
    assert.deepEqual(config, parseConfig(required));
    assert.equal(config.topics.whitelist, "orders|payments");
  });
});
