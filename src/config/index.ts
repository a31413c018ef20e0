export { isInContainer } from "./container.ts";
export { type LoadedConfig, type LoadOptions, loadConfig } from "./load.ts";
export {
  type Config,
  type ConfigKey,
  LOG_LEVELS,
  type LogLevel,
  PERMISSION_MODES,
  type PermissionMode,
  SETTINGS,
} from "./schema.ts";
