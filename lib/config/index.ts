export { type ConfigIssue, formatIssues } from "./issues.js";
export {
  CONFIG_DOCUMENT_VARIABLE,
  ENV_PREFIX,
  envVariableName,
  type LoadConfigOptions,
  loadConfigFromEnv,
} from "./load.js";
export {
  CONFIG_FIELDS,
  type MirrorConfig,
  type MirrorConfigInput,
  mirrorConfigSchema,
  parseConfig,
} from "./schema.js";
