import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { type FakeBotApi, startFakeBotApi } from "../fakes/bot-api.ts";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * The chat bot against the REAL agent CLI, through the compiled binary: ag configured by its
 * SVC_CHAT_* variables talks to a local server speaking the bot API, and a button pressed there
 * answers a real Bash permission prompt.
 */
const alice = { id: 777, first_name: "Alice", username: "alice" };
let bot: FakeBotApi;
let world: AgentWorld;
let id: string;

beforeAll(async () => {
  bot = startFakeBotApi();
  world = await startAgentWorld({
    SVC_CHAT_BOT_TOKEN: bot.token,
    SVC_CHAT_GROUP_ID: bot.groupId,
    SVC_CHAT_ALLOWED_USERS: String(alice.id),
    SVC_CHAT_API_BASE: bot.url,
  });
}, 60_000);
afterAll(async () => {
  await world?.stop();
  bot?.stop();
});

describe("the chat bot with a real agent", () => {
  test("the Approve button on a Bash permission prompt runs the command", async () => {
    const created = await world.api<Json>("POST", "/v1/sessions", {
      workDir: world.workDir,
      name: "chat-e2e",
      prompt: "run cmd: touch approved.txt",
    });
    expect(created.status).toBe(201);
    id = created.body.id as string;
    await world.waitFor(id, "permission_prompt");
    await bot.until(() => bot.messages.some((m) => m.reply_markup !== undefined), 15_000);
    const prompt = bot.messages.find((m) => m.reply_markup !== undefined)!;
    // The default dashboardUrl (http://localhost:<port>/dashboard) links to the session's page.
    const link = `http://localhost:${world.env.SVC_PORT}/dashboard/#/sessions/${id}`;
    expect(prompt.text).toBe(`🔐 Permission: Bash\ntouch approved.txt\n🔗 ${link}`);
    expect(prompt.entities.find((e) => e.type === "text_link")?.url).toBe(link);
    expect(bot.topics).toEqual([{ message_thread_id: prompt.thread_id!, name: "chat-e2e" }]);
    expect(existsSync(join(world.workDir, "approved.txt"))).toBe(false);

    bot.press(alice, prompt, "Approve");
    await world.waitFor(id, "idle");
    expect(existsSync(join(world.workDir, "approved.txt"))).toBe(true);
    await bot.until(() => prompt.edits > 0);
    expect(prompt.text).toEndWith("✅ Approved by @alice");
    expect(bot.callbackAnswers).toEqual([expect.objectContaining({ text: "Approved" })]);
    // The session's own messages followed in its topic (tool use as a progress line).
    await bot.until(() => bot.messages.some((m) => m.text.includes("🔧 Bash")), 15_000);
  }, 90_000);

  test("a message written in the session's topic becomes the agent's next prompt", async () => {
    const thread = bot.topics[0]!.message_thread_id;
    bot.write(alice, thread, "say hello");
    await bot.until(() => world.prompts().includes("say hello"), 30_000);
    await world.waitFor(id, "idle");
  }, 60_000);
});
