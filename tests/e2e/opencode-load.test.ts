import { saturateCores } from "../helpers/load.ts";
import { opencodeScenario } from "../helpers/opencode-scenario.ts";
import { tmuxAgentScenario } from "../helpers/tmux-scenario.ts";

/**
 * OpenCode's terminal scenario (tests/helpers/opencode-scenario.ts) on a world of its own with both
 * cores saturated by busy loops: run alone in npm test (scripts/e2e-plan.ts), apart from its idle
 * run (opencode.test.ts), which runs beside other files.
 */
tmuxAgentScenario(opencodeScenario([{ world: saturateCores }]));
