import { readFileSync } from "node:fs";
import { analyse, choose, type ScriptState } from "./choose.ts";
import { anthropicFace } from "./faces/anthropic.ts";
import type { Face } from "./faces/face.ts";
import { geminiFace } from "./faces/gemini.ts";
import { openaiResponsesFace } from "./faces/openai-responses.ts";
import { opencodeFace } from "./faces/opencode.ts";
import type { MockReply, MockRule, MockScenario } from "./rules.ts";
import { errorBody, type ReplyDefaults } from "./sse.ts";

/**
 * A scriptable mock model API on 127.0.0.1, for driving the real agent CLIs offline: one script
 * (rules.ts, choose.ts) behind a face per provider's wire protocol (faces/), and a control API
 * under /_mock/ for tests. `bun tests/fakes/mock-model/serve.ts` runs it on its own.
 */

/** One request as the mock saw it (GET /_mock/requests). */
export interface MockRequest {
  n: number;
  t: string;
  method: string;
  path: string;
  /** Messages requests: "main" (it offers tools) or "side" (titles, summaries). */
  kind?: "main" | "side";
  /** The last human prompt, in full: what a test typed, exactly as it arrived. */
  prompt?: string;
  /** Every human prompt in the request's messages, oldest first (the context the model got). */
  history?: string[];
  round?: number;
  rule?: string;
  model?: string;
  /** Which provider's protocol the request spoke (anthropic, openai-responses, gemini). */
  face?: string;
  stream?: boolean;
  tools?: string[];
  /** The status sent in full, or "aborted" when the client hung up first (an interrupt). */
  status?: number | "aborted";
}

export interface MockModel {
  url: string;
  port: number;
  requests(): MockRequest[];
  /** Runtime rules, tried before the scenario's and the built-in ones. */
  addRules(rules: MockRule[], options?: { replace?: boolean }): void;
  /** Answers for the next main requests, whatever their prompt. */
  enqueue(...replies: MockReply[]): void;
  /** Forgets runtime rules, queued replies, the request log and `times` counts. */
  reset(): void;
  stop(): Promise<void>;
}

export interface MockModelOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** A scenario object, or the path of a scenario JSON file. */
  scenario?: MockScenario | string;
}

const MAX_LOG = 1000;

/** Every provider the mock speaks; the first that handles a request answers it (specific ones first). */
export const FACES: readonly Face[] = [opencodeFace, anthropicFace, openaiResponsesFace, geminiFace];

export function startMockModel(options: MockModelOptions = {}): MockModel {
  const scenario: MockScenario =
    typeof options.scenario === "string"
      ? JSON.parse(readFileSync(options.scenario, "utf8"))
      : (options.scenario ?? {});
  const state: ScriptState = { scenario, runtimeRules: [], queue: [], used: new Map(), turn: null };
  const defaults: ReplyDefaults = { chunk_chars: 12, chunk_ms: 15, ...scenario.defaults };
  const log: MockRequest[] = [];
  let seq = 0;

  const control = {
    addRules(rules: MockRule[], { replace = false } = {}) {
      if (replace) state.runtimeRules.length = 0;
      state.runtimeRules.unshift(...rules);
    },
    enqueue(...replies: MockReply[]) {
      state.queue.push(...replies);
    },
    reset() {
      state.runtimeRules.length = 0;
      state.queue.length = 0;
      state.used.clear();
      state.turn = null;
      log.length = 0;
    },
  };

  async function handleControl(request: Request, path: string): Promise<Response> {
    const body = request.method === "POST" ? await readJson(request) : {};
    if (path === "/_mock/health") return Response.json({ ok: true, port: server.port, requests: seq });
    if (path === "/_mock/requests") return Response.json(log);
    if (request.method === "POST" && path === "/_mock/rules") {
      control.addRules((body.rules as MockRule[]) ?? [], { replace: body.replace === true });
      return Response.json({ rules: state.runtimeRules.length });
    }
    if (request.method === "POST" && path === "/_mock/enqueue") {
      control.enqueue(...((body.replies as MockReply[]) ?? [body as MockReply]));
      return Response.json({ queued: state.queue.length });
    }
    if (request.method === "POST" && path === "/_mock/reset") {
      control.reset();
      return Response.json({ ok: true });
    }
    return notFound(request.method, path);
  }

  async function handleApi(request: Request, path: string, entry: MockRequest): Promise<Response> {
    const settle = (status: number | "aborted") => {
      entry.status ??= status;
    };
    const raw = await readJson(request);
    const face = FACES.find((f) => f.handles(request.method, path, request));
    if (face) {
      const body = face.read(raw, new URL(request.url));
      const info = analyse(body);
      const { reply, name } = choose(state, body, info);
      Object.assign(entry, {
        kind: info.kind,
        prompt: info.prompt,
        history: info.history,
        round: info.round,
        rule: name,
        model: body.model,
        face: face.name,
      });
      Object.assign(entry, {
        stream: Boolean(body.stream),
        ...(info.kind === "main" ? { tools: info.toolNames } : {}),
      });
      return face.reply(request, body, raw, reply, defaults, settle);
    }
    const response =
      FACES.map((f) => f.other?.(request.method, path, raw) ?? null).find((r) => r !== null) ??
      notFound(request.method, path);
    settle(response.status);
    return response;
  }

  const server = Bun.serve({
    port: options.port ?? 0,
    hostname: "127.0.0.1",
    // A "hang" or a slow stream must outlive Bun's default 10 s idle timeout.
    idleTimeout: 0,
    async fetch(request) {
      const path = new URL(request.url).pathname;
      if (path.startsWith("/_mock/")) return handleControl(request, path);
      const entry: MockRequest = { n: ++seq, t: new Date().toISOString(), method: request.method, path };
      log.push(entry);
      if (log.length > MAX_LOG) log.shift();
      try {
        return await handleApi(request, path, entry);
      } catch (err) {
        entry.status ??= 500;
        return Response.json(errorBody("api_error", String(err)), { status: 500 });
      }
    },
  });

  return {
    url: `http://127.0.0.1:${server.port}`,
    port: server.port!,
    requests: () => log.map((entry) => ({ ...entry })),
    ...control,
    async stop() {
      await server.stop(true);
    },
  };
}

/** A well-formed Anthropic-style 404, so clients treat the feature as unavailable. */
function notFound(method: string, path: string): Response {
  return Response.json(errorBody("not_found_error", `mock-model: no handler for ${method} ${path}`), {
    status: 404,
  });
}

async function readJson(request: Request): Promise<Record<string, unknown>> {
  const raw = await request.text();
  try {
    const parsed = raw ? JSON.parse(raw) : {};
    return parsed && typeof parsed === "object" ? parsed : {};
  } catch {
    return {};
  }
}
