import { opencodeScenario } from "../helpers/opencode-scenario.ts";
import { tmuxAgentScenario } from "../helpers/tmux-scenario.ts";

/**
 * OpenCode as an agent of ag, end to end: the compiled binary runs the REAL OpenCode CLI
 * (opencode-ai 1.18.33) in tmux against the mock model, through ag's plugin for hooks, policy
 * and the conversation file. The scenario every tmux agent runs (tests/helpers/tmux-scenario.ts)
 * on an idle machine, then OpenCode's own tests (resume, fork, permission modes); the same
 * scenario with both cores saturated is opencode-load.test.ts (run alone: scripts/e2e-plan.ts).
 * One OpenCode at a time (each takes ~0.9 GB); the tests run in order on one session.
 */
tmuxAgentScenario(opencodeScenario(["idle"]));
