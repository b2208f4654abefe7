import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { CliError } from "../../../../lib/cli/cli-error.js";
import { repositoryRoot, requireTestbed } from "../../../../lib/cli/commands/demo-testbed.js";

describe("demo's test bed check", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "kafka-mirror-demo-testbed-"));
    await mkdir(join(dir, "repo", "scripts"), { recursive: true });
    await mkdir(join(dir, "repo", "lib", "cli"), { recursive: true });
    await writeFile(join(dir, "repo", "scripts", "setup-testbed.sh"), "");
    await mkdir(join(dir, "app", "node_modules", "kafka-mirror", "dist"), { recursive: true });
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("finds the repository from its sources, and none from an installed package's bundle", () => {
    assert.equal(repositoryRoot(join(dir, "repo", "lib", "cli", "demo.ts")), join(dir, "repo"));
    assert.equal(repositoryRoot(join(dir, "app", "node_modules", "kafka-mirror", "dist", "cli.js")), null);
  });

  it("in a clone without the test bed, points at npm run setup:testbed", () => {
    assert.throws(
      () => requireTestbed(join(dir, "repo", ".testbed", "bin", "mock-kafka"), join(dir, "repo")),
      (error: unknown) =>
        error instanceof CliError && /run `npm run setup:testbed` in the repository/.test(error.message),
    );
  });

  it("in an installed package, names no npm script it lacks: a clone for demo, init for own clusters", () => {
    assert.throws(
      () => requireTestbed(join(dir, "app", "node_modules", ".testbed", "bin", "mock-kafka"), null),
      (error: unknown) =>
        error instanceof CliError &&
        /only a clone of the kafka-mirror repository has/.test(error.message) &&
        /kafka-mirror init --output mirror\.yaml/.test(error.message) &&
        !/setup:testbed/.test(error.message),
    );
  });

  it("passes when the launcher is there", () => {
    requireTestbed(join(dir, "repo", "scripts", "setup-testbed.sh"), null);
  });
});
