// `npm run structure`: the structure rules of issues 12 and 24, checked on lib/, functions/ and
// infra/. Exits 1 and names each break.
//
// - Size: no file over 400 lines, no function over 60.
// - No import cycles. Type-only imports count: a cycle of types still means two files that can
//   only be read, changed and moved together, and the fix is the same (the shared type moves down
//   into the layer's model.ts); counting them also keeps the rule one that a reader can check by
//   looking at the import lines.
// - Layers (LAYERS below): the core imports nothing but itself and lib/errors.ts; a service
//   imports the core and other services; an adapter imports the core and the services, never
//   another adapter; only the wiring imports adapters. A file under lib/ in no layer is a break,
//   so a new folder has to be placed.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const ROOTS = ["lib", "functions", "infra"];
const MAX_FILE_LINES = 400;
const MAX_FUNCTION_LINES = 60;

type Layer = "errors" | "core" | "service" | "adapter" | "wiring";

/**
 * Every folder (or file) under the roots, placed in a layer; the longest matching prefix wins.
 * - errors: the one error vocabulary every layer shares.
 * - core: replication logic and the ports it declares; no library, no other folder.
 * - service: logic over the core's ports that neither talks to a broker nor to AWS itself: the
 *   config schema (zod), topic selection and renaming (RE2), group offset sync, lag, verify. They
 *   take readers, writers and group ports as arguments; the wiring passes the adapters in.
 * - adapter: one outside system each, behind the core's ports: kafkajs and the Kafka protocol
 *   (lib/kafka), DynamoDB with its embedded dynalite server (lib/dynamodb), Secrets Manager and
 *   credential files (lib/secrets), Powertools metrics and logs (lib/observability). An adapter
 *   never imports another: what two of them share is a core port or a service's type.
 * - wiring: the only code that builds adapters and hands them to the core: the composition module
 *   (lib/wiring.ts), the replicator builder,
 *   the CLI, the Lambda functions and the CDK app (which reads adapters' names: table key,
 *   transactional id prefix, metric names). Two files in lib/secrets are wiring too: they put a
 *   secret (the Secrets Manager adapter) into the Kafka adapter's connection options, and re-read
 *   it when Kafka refuses a login. scripts/ and bin/ are outside the roots and wiring too.
 */
export const LAYERS: Readonly<Record<string, Layer>> = {
  "lib/errors.ts": "errors",
  "lib/core": "core",
  "lib/config": "service",
  "lib/topics": "service",
  "lib/offsets": "service",
  "lib/lag": "service",
  "lib/verify": "service",
  "lib/kafka": "adapter",
  "lib/dynamodb": "adapter",
  "lib/secrets": "adapter",
  "lib/secrets/cluster-security.ts": "wiring",
  "lib/secrets/credential-refresh.ts": "wiring",
  "lib/observability": "adapter",
  "lib/replicator.ts": "wiring",
  "lib/wiring.ts": "wiring",
  "lib/cli": "wiring",
  functions: "wiring",
  infra: "wiring",
};

/** What each layer may import, besides its own folder (an adapter: its own adapter). */
const MAY_IMPORT: Readonly<Record<Layer, readonly Layer[]>> = {
  errors: [],
  core: ["errors", "core"],
  service: ["errors", "core", "service"],
  adapter: ["errors", "core", "service"],
  wiring: ["errors", "core", "service", "adapter", "wiring"],
};

export interface Place {
  readonly layer: Layer;
  /** The LAYERS key that placed the file: an adapter's folder. */
  readonly unit: string;
}

export function placeOf(path: string): Place | undefined {
  let best: string | undefined;
  for (const key of Object.keys(LAYERS)) {
    if ((path === key || path.startsWith(`${key}/`)) && (best === undefined || key.length > best.length))
      best = key;
  }
  const layer = best === undefined ? undefined : LAYERS[best];
  return best === undefined || layer === undefined ? undefined : { layer, unit: best };
}

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

function longFunctions(path: string, text: string): string[] {
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

/** The files under the roots a file imports (static, type-only, re-export and dynamic imports). */
function importsOf(path: string, text: string, root: string, known: ReadonlySet<string>): string[] {
  const found = new Set<string>();
  for (const { fileName } of ts.preProcessFile(text, true, true).importedFiles) {
    if (!fileName.startsWith(".")) continue;
    const absolute = resolve(root, dirname(path), fileName);
    const base = relative(root, absolute).split(sep).join("/");
    const candidates = [
      base.replace(/\.js$/, ".ts"),
      base.replace(/\.js$/, ".d.ts"),
      `${base}.ts`,
      `${base}/index.ts`,
    ];
    const target = candidates.find((c) => known.has(c));
    if (target !== undefined) found.add(target);
  }
  return [...found];
}

/** Strongly connected components with more than one file (or a file importing itself): Tarjan. */
export function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next++;
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(to) ?? 0));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(to) ?? 0));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
      onStack.delete(top);
      component.push(top);
      if (top === node) break;
    }
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) cycles.push(component.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return cycles;
}

function layerBreak(from: string, to: string): string | undefined {
  const source = placeOf(from);
  const target = placeOf(to);
  if (source === undefined)
    return `${from} is in no layer (add its folder to LAYERS in scripts/structure.ts)`;
  if (target === undefined) return undefined; // reported as its own file
  if (source.layer === "adapter" && target.layer === "adapter" && source.unit !== target.unit) {
    return `${from} (adapter ${source.unit}) imports another adapter: ${to}`;
  }
  if (!MAY_IMPORT[source.layer].includes(target.layer) && source.unit !== target.unit) {
    return `${from} (${source.layer}) imports ${to} (${target.layer})`;
  }
  return undefined;
}

export interface StructureReport {
  readonly sizes: readonly string[];
  readonly cycles: readonly string[][];
  readonly layerBreaks: readonly string[];
}

/** Checks the tree under `root` (the repository's folder). */
export function checkStructure(root: string): StructureReport {
  const files = ROOTS.filter((r) => {
    try {
      return statSync(join(root, r)).isDirectory();
    } catch {
      return false;
    }
  })
    .flatMap((r) => sourceFiles(join(root, r)))
    .map((p) => relative(root, p).split(sep).join("/"))
    .sort();
  const known = new Set(files);
  const sizes: string[] = [];
  const graph = new Map<string, string[]>();
  const layerBreaks = new Set<string>();
  for (const path of files) {
    const text = readFileSync(join(root, path), "utf8");
    const lines = text.split("\n").length - 1;
    if (lines > MAX_FILE_LINES) sizes.push(`${path} is ${lines} lines (limit ${MAX_FILE_LINES})`);
    if (!path.endsWith(".d.ts")) sizes.push(...longFunctions(path, text));
    const imports = importsOf(path, text, root, known);
    graph.set(path, imports);
    if (path.startsWith("lib/") && placeOf(path) === undefined) {
      layerBreaks.add(`${path} is in no layer (add its folder to LAYERS in scripts/structure.ts)`);
    }
    for (const to of imports) {
      const problem = layerBreak(path, to);
      if (problem !== undefined) layerBreaks.add(problem);
    }
  }
  return { sizes, cycles: cyclesOf(graph), layerBreaks: [...layerBreaks] };
}

function main(): void {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
  const { sizes, cycles, layerBreaks } = checkStructure(root);
  for (const problem of sizes) console.log(problem);
  for (const cycle of cycles) console.log(`import cycle: ${cycle.join(" <-> ")}`);
  for (const problem of layerBreaks) console.log(`layer break: ${problem}`);
  console.log(
    sizes.length === 0
      ? "structure: all files and functions within limits"
      : `structure: ${sizes.length} over the limits`,
  );
  console.log(`structure: ${cycles.length} import cycles, ${layerBreaks.length} layer breaks`);
  process.exitCode = sizes.length + cycles.length + layerBreaks.length === 0 ? 0 : 1;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
