import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AgentSeed } from "./index.ts";

const REPO = join(import.meta.dir, "..", "..", "..");

/**
 * The Gemini CLI (@google/gemini-cli, a devDependency) in a test world: its user settings choose
 * the API key (GEMINI_API_KEY, any string to the mock) and a fixed model (no router requests),
 * and turn off what would go elsewhere (updates, usage statistics, telemetry).
 * GOOGLE_GEMINI_BASE_URL points it at the mock's Gemini face.
 */
export const geminiSeed: AgentSeed = {
  binaries: (modules = join(REPO, "node_modules")) => ({ gemini: join(modules, ".bin", "gemini") }),
  seed(home, mockUrl) {
    mkdirSync(join(home, ".gemini"), { recursive: true });
    const settings = {
      security: { auth: { selectedType: "gemini-api-key" } },
      general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      model: { name: "gemini-2.5-flash" },
    };
    writeFileSync(join(home, ".gemini", "settings.json"), JSON.stringify(settings, null, 2));
    return { GEMINI_API_KEY: "mock-gemini-key", GOOGLE_GEMINI_BASE_URL: mockUrl };
  },
};
