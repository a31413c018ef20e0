import { describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../src/config/index.ts";
import {
  createRouterService,
  scoreTask,
  type TierModels,
  tierModels,
  tierOf,
} from "../../src/router/index.ts";
import { routerRoutes } from "../../src/server/routes/router.ts";
import { testApp } from "../helpers/app.ts";
import { tempDir } from "../helpers/temp.ts";

const models: TierModels = { fast: "model-f", standard: "model-s", power: "model-p" };
const router = createRouterService({ models });
const route = (title: string, labels: string[] = [], description = "") =>
  router.route({ title, labels, description });

describe("scoring single keywords", () => {
  test("no keyword scores 50: standard", () => {
    expect(route("Do the thing")).toEqual({ tier: "standard", model: "model-s", score: 50, reasoning: [] });
  });

  test("a power keyword adds 25: power", () => {
    expect(route("Fix the security hole")).toEqual({
      tier: "power",
      model: "model-p",
      score: 75,
      reasoning: ['power keyword: "security"'],
    });
  });

  test("a standard keyword adds 5: standard", () => {
    expect(route("Add a feature")).toEqual({
      tier: "standard",
      model: "model-s",
      score: 55,
      reasoning: ['standard keyword: "feature"'],
    });
  });

  test("a fast keyword takes 25: fast", () => {
    expect(route("Fix typo")).toEqual({
      tier: "fast",
      model: "model-f",
      score: 25,
      reasoning: ['fast keyword: "typo"'],
    });
  });

  test.each([
    ["security", "power"],
    ["auth", "power"],
    ["architecture", "power"],
    ["migration", "power"],
    ["critical", "power"],
    ["vulnerability", "power"],
    ["concurrency", "power"],
    ["breaking change", "power"],
    ["feature", "standard"],
    ["refactor", "standard"],
    ["test", "standard"],
    ["coverage", "standard"],
    ["api", "standard"],
    ["performance", "standard"],
    ["optimization", "standard"],
    ["typo", "fast"],
    ["docs", "fast"],
    ["label", "fast"],
    ["rename", "fast"],
    ["bump", "fast"],
    ["chore", "fast"],
    ["formatting", "fast"],
    ["readme", "fast"],
  ])("SPEC's keyword %p is a %p keyword", (keyword, tier) => {
    const result = route(`about ${keyword} here`);
    expect(result.tier).toBe(tier as never);
    expect(result.reasoning).toEqual([`${tier} keyword: "${keyword}"`]);
  });
});

describe("scoring mixes", () => {
  test("power and fast cancel out", () => {
    expect(route("Security typo").score).toBe(50);
  });

  test("two power keywords reach 100, three are clamped at 100", () => {
    expect(route("auth migration").score).toBe(100);
    const three = route("critical auth migration");
    expect(three.score).toBe(100);
    expect(three.tier).toBe("power");
    expect(three.reasoning).toHaveLength(3);
  });

  test("two fast keywords reach 0, three are clamped at 0", () => {
    expect(route("bump readme").score).toBe(0);
    const three = route("chore: bump version, fix typo");
    expect(three.score).toBe(0);
    expect(three.tier).toBe("fast");
  });

  test("a fast and a standard keyword land on 30, the top of fast", () => {
    expect(route("Fix typo in test")).toMatchObject({ score: 30, tier: "fast" });
  });

  test("reasoning lists power, then standard, then fast keywords", () => {
    expect(route("rename api for security").reasoning).toEqual([
      'power keyword: "security"',
      'standard keyword: "api"',
      'fast keyword: "rename"',
    ]);
  });

  test("tiers split at 30/31 and 70/71", () => {
    expect([0, 30, 31, 70, 71, 100].map(tierOf)).toEqual([
      "fast",
      "fast",
      "standard",
      "standard",
      "power",
      "power",
    ]);
    // four standard keywords: 70, still standard
    expect(route("feature refactor test coverage")).toMatchObject({ score: 70, tier: "standard" });
  });
});

describe("matching", () => {
  test("is case-insensitive and reports the keyword as SPEC spells it", () => {
    expect(route("SECURITY review of the ReadMe").reasoning).toEqual([
      'power keyword: "security"',
      'fast keyword: "readme"',
    ]);
  });

  test("matches whole words only", () => {
    for (const title of ["testing the attestation", "authority", "apiary docstring", "relabel"]) {
      expect(route(title).reasoning).toEqual([]);
    }
  });

  test("punctuation, hyphens and underscores separate words", () => {
    expect(route("auth-service: fix_typo (docs)").reasoning).toEqual([
      'power keyword: "auth"',
      'fast keyword: "typo"',
      'fast keyword: "docs"',
    ]);
  });

  test("a regular plural counts as its keyword", () => {
    expect(route("Add tests").reasoning).toEqual(['standard keyword: "test"']);
    expect(route("Fix typos").reasoning).toEqual(['fast keyword: "typo"']);
    expect(route("Two vulnerabilities").reasoning).toEqual(['power keyword: "vulnerability"']);
    expect(route("Document breaking changes").reasoning).toEqual(['power keyword: "breaking change"']);
  });

  test('"breaking change" matches across any whitespace, not across other characters', () => {
    expect(route("a breaking\n\t  change").reasoning).toEqual(['power keyword: "breaking change"']);
    expect(route("breakingchange").reasoning).toEqual([]);
    expect(route("breaking, change").reasoning).toEqual([]);
  });

  test("each distinct keyword counts once, wherever and however often it appears", () => {
    const result = route("test the test", ["test", "tests"], "more tests and a TEST");
    expect(result.score).toBe(55);
    expect(result.reasoning).toEqual(['standard keyword: "test"']);
  });

  test("labels and the description contribute", () => {
    expect(route("Something", ["security"])).toMatchObject({ tier: "power", score: 75 });
    expect(route("Something", [], "Touches the auth flow")).toMatchObject({ tier: "power", score: 75 });
    expect(route("Update", ["chore"], "just a bump").score).toBe(0);
  });

  test("two labels do not join into a phrase", () => {
    expect(route("Something", ["breaking", "change"]).reasoning).toEqual([]);
  });

  test("scoreTask works on any list of texts", () => {
    expect(scoreTask([])).toEqual({ score: 50, tier: "standard", reasoning: [] });
  });
});

describe("HTTP", () => {
  const app = testApp({ plugins: [routerRoutes(router)] });

  test("POST /v1/dev/route-task answers the route result", async () => {
    const response = await app.request("POST", "/v1/dev/route-task", {
      body: { title: "Refactor the API", labels: ["security"], description: "see the readme" },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      tier: "standard",
      model: "model-s",
      score: 60,
      reasoning: [
        'power keyword: "security"',
        'standard keyword: "refactor"',
        'standard keyword: "api"',
        'fast keyword: "readme"',
      ],
    });
  });

  test("labels and description are optional", async () => {
    const response = await app.request("POST", "/v1/dev/route-task", { body: { title: "Fix typo" } });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ tier: "fast", score: 25 });
  });

  test.each([
    ["a missing title", {}, "body.title"],
    ["an empty title", { title: "" }, "body.title"],
    ["a title over 1024 characters", { title: "x".repeat(1025) }, "body.title"],
    ["labels that are not strings", { title: "t", labels: [1] }, "body.labels"],
    ["more than 100 labels", { title: "t", labels: Array(101).fill("a") }, "body.labels"],
    ["a label over 128 characters", { title: "t", labels: ["x".repeat(129)] }, "body.labels"],
    ["a description over 64 KiB", { title: "t", description: "x".repeat(65_537) }, "body.description"],
  ])("%s is a 400 naming the field", async (_, body, field) => {
    const response = await app.request("POST", "/v1/dev/route-task", { body });
    expect(response.status).toBe(400);
    const error = await response.json();
    expect(error).toMatchObject({ code: "VALIDATION_ERROR", statusCode: 400 });
    expect(error.error).toContain(field);
  });

  test("GET /v1/dev/model-tiers lists each tier with its model and inclusive range", async () => {
    const response = await app.request("GET", "/v1/dev/model-tiers");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      tiers: [
        { tier: "fast", model: "model-f", range: { min: 0, max: 30 } },
        { tier: "standard", model: "model-s", range: { min: 31, max: 70 } },
        { tier: "power", model: "model-p", range: { min: 71, max: 100 } },
      ],
    });
  });
});

describe("models come from the configuration", () => {
  function configFrom(env: Record<string, string>) {
    const root = tempDir("ag-router-");
    for (const dir of ["home", "cwd", "rootfs"]) mkdirSync(join(root, dir));
    return loadConfig({
      env,
      home: join(root, "home"),
      cwd: join(root, "cwd"),
      containerRoot: join(root, "rootfs"),
    }).config;
  }

  test("MODEL_FAST, MODEL_STANDARD and MODEL_POWER override the tier models", async () => {
    const config = configFrom({ MODEL_FAST: "tiny-1", MODEL_STANDARD: "mid-2", MODEL_POWER: "big-3" });
    const app = testApp({ plugins: [routerRoutes(createRouterService({ models: tierModels(config) }))] });

    const tiers = await (await app.request("GET", "/v1/dev/model-tiers")).json();
    expect(tiers.tiers.map((t: { model: string }) => t.model)).toEqual(["tiny-1", "mid-2", "big-3"]);
    const routed = await app.request("POST", "/v1/dev/route-task", { body: { title: "security audit" } });
    expect(await routed.json()).toMatchObject({ tier: "power", model: "big-3" });
  });

  test("one override leaves the other tiers at their defaults", () => {
    const defaults = tierModels(configFrom({}));
    const models = tierModels(configFrom({ MODEL_POWER: "big-3" }));
    expect(models).toEqual({ ...defaults, power: "big-3" });
  });
});
