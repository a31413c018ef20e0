import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AgentSeed } from "./index.ts";

const REPO = join(import.meta.dir, "..", "..", "..");

/** The variable that holds the mock provider's key (any non-empty value: the mock checks none). */
const KEY_VARIABLE = "MOCK_CODEX_KEY";

/**
 * Codex CLI (0.169.0; CODEX_BIN, the launcher bin/codex.js of another install, tries another
 * version) in a test world: the npm package's launcher as `codex`, and
 * $HOME/.codex/config.toml with a custom provider for the mock's openai-responses face. The
 * model is one of Codex's catalog (`gpt-5.5`): with an unknown one Codex offers no apply_patch
 * tool. Everything that would show a start-up notice or reach the network is off (the plugin
 * marketplace, apps, analytics, feedback, the update check), retries too (an API error shows at
 * once). One fetch has no switch in 0.169.0 — the TUI's tip of the day from GitHub — so https
 * goes to a closed local port (loopback, the mock included, is exempt).
 */
export const codexSeed: AgentSeed = {
  binaries: (modules) => ({
    codex: modules ? join(modules, "@openai", "codex", "bin", "codex.js") : codexLauncher(),
  }),
  seed(home, mockUrl) {
    const dir = join(home, ".codex");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "config.toml"), config(mockUrl));
    const noHttps = "http://127.0.0.1:9";
    const loopback = "127.0.0.1,localhost";
    return {
      [KEY_VARIABLE]: "sk-test-codex-0000",
      HTTPS_PROXY: noHttps,
      https_proxy: noHttps,
      NO_PROXY: loopback,
      no_proxy: loopback,
    };
  },
};

/** The launcher the tests run: CODEX_BIN when set, else the pinned devDependency's. */
export function codexLauncher(): string {
  return process.env.CODEX_BIN || join(REPO, "node_modules", "@openai", "codex", "bin", "codex.js");
}

/** The version of the launcher the tests run ("0.169.0"), read from its package.json. */
export function codexVersion(): string {
  const manifest = join(codexLauncher(), "..", "..", "package.json");
  return (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version;
}

function config(mockUrl: string): string {
  return `model_provider = "mock"
model = "gpt-5.5"
check_for_update_on_startup = false

[model_providers.mock]
name = "Mock"
base_url = "${mockUrl}/v1"
env_key = "${KEY_VARIABLE}"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[features]
plugins = false
remote_plugin = false
apps = false

[analytics]
enabled = false

[feedback]
enabled = false

[tui]
show_tooltips = false
screen_reader_detection_done = true

[tui.model_availability_nux]
"gpt-6.1-sol" = 1

[notice.model_migrations]
"gpt-5.5" = "gpt-6-sol"
`;
}
