// What CloudFormation would make of a template value for given parameter values: the intrinsic
// functions our templates use (Ref, Fn::Join, Fn::Split, Fn::Select, Fn::If, Fn::GetAtt,
// Fn::FindInMap and the condition functions). A resource's Ref stands for a physical name
// `<logicalId>-physical`, its attributes for `<logicalId>.<attribute>`.

export interface CfnTemplate {
  readonly Parameters?: Record<string, { Default?: unknown }>;
  readonly Conditions?: Record<string, unknown>;
  readonly Mappings?: Record<string, Record<string, Record<string, unknown>>>;
  readonly Resources?: Record<string, unknown>;
}

export interface Deployment {
  readonly template: CfnTemplate;
  /** Values given at deploy time; the others take their Default. */
  readonly parameters: Readonly<Record<string, string>>;
  readonly region: string;
}

export function evaluate(value: unknown, at: Deployment): unknown {
  if (Array.isArray(value)) return value.map((v) => evaluate(v, at));
  if (typeof value !== "object" || value === null) return value;
  const [name, args] = Object.entries(value)[0] ?? [];
  const arg = (i: number) => evaluate((args as unknown[])[i], at);
  switch (name) {
    case "Ref":
      return reference(String(args), at);
    case "Fn::Join":
      return (arg(1) as unknown[]).map(String).join(String(arg(0)));
    case "Fn::Split":
      return String(arg(1)).split(String(arg(0)));
    case "Fn::Select":
      return (arg(1) as unknown[])[Number(arg(0))];
    case "Fn::If":
      return condition(String((args as unknown[])[0]), at) ? arg(1) : arg(2);
    case "Fn::GetAtt":
      return (args as string[]).join(".");
    case "Fn::FindInMap": {
      const [map, key, field] = [arg(0), arg(1), arg(2)].map(String);
      return at.template.Mappings?.[map ?? ""]?.[key ?? ""]?.[field ?? ""];
    }
    default:
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, evaluate(v, at)]));
  }
}

function reference(name: string, at: Deployment): unknown {
  if (name === "AWS::Region") return at.region;
  if (name in at.parameters) return at.parameters[name];
  const parameter = at.template.Parameters?.[name];
  if (parameter !== undefined) {
    if (parameter.Default === undefined) throw new Error(`parameter ${name} has no value`);
    return String(parameter.Default);
  }
  if (at.template.Resources?.[name] !== undefined) return `${name}-physical`;
  throw new Error(`Ref to unknown ${name}`);
}

export function condition(name: string, at: Deployment): boolean {
  const expression = at.template.Conditions?.[name];
  if (expression === undefined) throw new Error(`unknown condition ${name}`);
  return truth(expression, at);
}

function truth(expression: unknown, at: Deployment): boolean {
  const [name, args] = Object.entries(expression as object)[0] ?? [];
  const list = args as unknown[];
  switch (name) {
    case "Fn::Equals":
      return String(evaluate(list[0], at)) === String(evaluate(list[1], at));
    case "Fn::Not":
      return !truth(list[0], at);
    case "Fn::And":
      return list.every((c) => truth(c, at));
    case "Fn::Or":
      return list.some((c) => truth(c, at));
    case "Condition":
      return condition(String(args), at);
    default:
      throw new Error(`unknown condition function ${String(name)}`);
  }
}
