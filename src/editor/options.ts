import type * as acp from "@agentclientprotocol/sdk";
import type { AgentInfo } from "../agents/index.ts";
import {
  DRIVER_NAMES,
  type DriverName,
  PERMISSION_MODES,
  type PermissionMode,
} from "../agents/vocabulary.ts";
import { AgError } from "../shared/errors.ts";

/**
 * What a new session will be launched with, as the editor picks it before the first prompt:
 * the agent CLI, the driver, the permission mode (ACP's session modes, and a config option of
 * category `mode`) and the model. Pure: tested without a server.
 */
export interface Choices {
  agent: string;
  driver: DriverName;
  permissionMode: PermissionMode;
  /** null: the agent's own default. */
  model: string | null;
}

/** The agent's own default model: the value of the model option that names none. */
export const DEFAULT_MODEL = "default";

const MODE_DESCRIPTIONS: Record<PermissionMode, string> = {
  default: "Ask before edits and commands",
  bypassPermissions: "Never ask: run everything",
  plan: "Plan only: change nothing",
  acceptEdits: "Edit without asking; ask before commands",
  dontAsk: "Refuse what would need asking",
  auto: "The agent decides what to ask",
};

/** The choices an agent can run with: a driver or mode it lacks falls back to its first one. */
export function fitChoices(choices: Choices, agents: readonly AgentInfo[]): Choices {
  const agent = agents.find((a) => a.id === choices.agent);
  if (!agent) return choices;
  const driver = agent.drivers.includes(choices.driver)
    ? choices.driver
    : (agent.drivers[0] ?? choices.driver);
  const permissionMode = agent.permissionModes.includes(choices.permissionMode)
    ? choices.permissionMode
    : (agent.permissionModes[0] ?? choices.permissionMode);
  return { ...choices, driver, permissionMode };
}

function modesOf(choices: Choices, agents: readonly AgentInfo[]): readonly PermissionMode[] {
  return agents.find((a) => a.id === choices.agent)?.permissionModes ?? PERMISSION_MODES;
}

/** ACP's session modes: the permission modes of the chosen agent. */
export function modeState(choices: Choices, agents: readonly AgentInfo[]): acp.SessionModeState {
  return {
    currentModeId: choices.permissionMode,
    availableModes: modesOf(choices, agents).map((mode) => ({
      id: mode,
      name: mode,
      description: MODE_DESCRIPTIONS[mode],
    })),
  };
}

const select = (
  id: string,
  name: string,
  category: string | null,
  currentValue: string,
  options: Array<{ value: string; name: string; description?: string }>,
): acp.SessionConfigOption => ({ id, name, type: "select", category, currentValue, options });

/**
 * The config options: the agent (those installed), its driver, the permission mode and the model
 * (the agent's default, the configured tiers and the one given to `ag acp --model`).
 */
export function configOptions(
  choices: Choices,
  agents: readonly AgentInfo[],
  models: readonly string[],
): acp.SessionConfigOption[] {
  const installed = agents.filter((a) => a.installed || a.id === choices.agent);
  const agent = agents.find((a) => a.id === choices.agent);
  const modelValues = [...new Set([...models, ...(choices.model ? [choices.model] : [])])];
  return [
    select(
      "agent",
      "Agent",
      null,
      choices.agent,
      installed.map((a) => ({ value: a.id, name: a.name })),
    ),
    select(
      "driver",
      "Driver",
      null,
      choices.driver,
      (agent?.drivers ?? DRIVER_NAMES).map((d) => ({
        value: d,
        name: d === "tmux" ? "tmux (terminal UI)" : "acp (headless)",
      })),
    ),
    select(
      "mode",
      "Permission mode",
      "mode",
      choices.permissionMode,
      modesOf(choices, agents).map((m) => ({ value: m, name: m, description: MODE_DESCRIPTIONS[m] })),
    ),
    select("model", "Model", "model", choices.model ?? DEFAULT_MODEL, [
      { value: DEFAULT_MODEL, name: "The agent's default" },
      ...modelValues.map((m) => ({ value: m, name: m })),
    ]),
  ];
}

/** The choices after the editor sets one option; a value the option does not offer is refused. */
export function applyOption(
  choices: Choices,
  agents: readonly AgentInfo[],
  models: readonly string[],
  configId: string,
  value: unknown,
): Choices {
  const option = configOptions(choices, agents, models).find((o) => o.id === configId);
  if (option?.type !== "select") throw new AgError("VALIDATION_ERROR", `no option ${configId}`);
  const values = (option.options as acp.SessionConfigSelectOption[]).map((o) => o.value);
  if (typeof value !== "string" || !values.includes(value))
    throw new AgError(
      "VALIDATION_ERROR",
      `${configId} is one of ${values.join(", ")}, not ${JSON.stringify(value)}`,
    );
  switch (configId) {
    case "agent":
      return fitChoices({ ...choices, agent: value }, agents);
    case "driver":
      return { ...choices, driver: value as DriverName };
    case "mode":
      return { ...choices, permissionMode: value as PermissionMode };
    default:
      return { ...choices, model: value === DEFAULT_MODEL ? null : value };
  }
}
