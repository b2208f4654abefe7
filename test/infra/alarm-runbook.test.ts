/** The README's alarm table says what the alarms' descriptions say (infra/alarm-runbook.ts). */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { ALARM_RUNBOOK, type AlarmId } from "../../infra/alarm-runbook.js";

const README = readFileSync(new URL("../../README.md", import.meta.url), "utf8");

/** The rows of the table headed `| Alarm | Fires when | What to do |`, as cells. */
function alarmTable(): string[][] {
  const lines = README.split("\n");
  const header = lines.indexOf("| Alarm | Fires when | What to do |");
  assert.notEqual(header, -1, "README has the alarm table");
  const rows: string[][] = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith("|")) break;
    rows.push(
      line
        .slice(1, -1)
        .split(" | ")
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

describe("alarm runbook", () => {
  it("is the README's alarm table, row for row, every alarm once", () => {
    const listed: string[] = [];
    for (const [names, firesWhen, whatToDo] of alarmTable()) {
      for (const [, name] of (names ?? "").matchAll(/`(\w+)`/g)) {
        assert.ok(name !== undefined && name in ALARM_RUNBOOK, `README names ${name}, which is no alarm`);
        const runbook = ALARM_RUNBOOK[name as AlarmId];
        assert.equal(firesWhen, runbook.firesWhen, `${name}: Fires when`);
        assert.equal(whatToDo, runbook.whatToDo, `${name}: What to do`);
        listed.push(name);
      }
    }
    assert.deepEqual([...listed].sort(), Object.keys(ALARM_RUNBOOK).sort());
  });
});
