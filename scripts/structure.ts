// Checks the structure limits issue 12 sets: no file under lib/, functions/ or infra/
// over 400 lines and no function over 60. Exits 1 and names each offender.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";

const ROOTS = ["lib", "functions", "infra"];
const MAX_FILE_LINES = 400;
const MAX_FUNCTION_LINES = 60;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

function functionName(node: ts.Node, file: ts.SourceFile): string {
  if (ts.isConstructorDeclaration(node)) return "constructor";
  const named = node as { name?: ts.Node };
  if (named.name !== undefined) return named.name.getText(file);
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) return parent.name.getText(file);
  return "(anonymous)";
}

function longFunctions(path: string): string[] {
  const text = readFileSync(path, "utf8");
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && "body" in node && node.body !== undefined) {
      const start = file.getLineAndCharacterOfPosition(node.getStart(file)).line;
      const end = file.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = end - start + 1;
      if (lines > MAX_FUNCTION_LINES) {
        found.push(
          `${path}:${start + 1} ${functionName(node, file)} is ${lines} lines (limit ${MAX_FUNCTION_LINES})`,
        );
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

const problems: string[] = [];
for (const path of ROOTS.flatMap(sourceFiles)) {
  const lines = readFileSync(path, "utf8").split("\n").length - 1;
  if (lines > MAX_FILE_LINES) problems.push(`${path} is ${lines} lines (limit ${MAX_FILE_LINES})`);
  problems.push(...longFunctions(path));
}
for (const problem of problems) console.log(problem);
console.log(
  problems.length === 0
    ? "structure: all files and functions within limits"
    : `structure: ${problems.length} over the limits`,
);
process.exitCode = problems.length === 0 ? 0 : 1;
