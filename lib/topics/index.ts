export {
  INTERNAL_TOPIC_PREFIX,
  isInternalTopic,
  isReservedTopic,
  LEGAL_TOPIC_CHARS,
  MAX_TOPIC_NAME_LENGTH,
  RESERVED_TOPIC_PREFIX,
  topicNameProblem,
} from "./names.js";
export { compileTopicPattern, type PatternCompilation } from "./pattern.js";
export { ALIAS_SEPARATOR, hasPassedThrough, RENAME_MODES, type RenameMode, renameTopic } from "./rename.js";
export {
  createTopicSelector,
  type SkipReason,
  selectTopics,
  type TopicDecision,
  type TopicSelection,
  type TopicSelector,
  type TopicSelectorOptions,
} from "./selection.js";
