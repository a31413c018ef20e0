import { afterAll } from "bun:test";
import { runCleanups } from "./helpers/cleanup.ts";

// Preloaded for every `bun test` run (bunfig.toml): what the tests created is removed at the end,
// whichever files ran and however they ended.
afterAll(runCleanups);
