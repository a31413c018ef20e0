/**
 * A real HTTP server (Bun.serve on port 0) speaking the common bot API wire protocol the chat
 * channel uses: `POST /bot<token>/<method>` with JSON, answered `{ok, result}` or
 * `{ok: false, error_code, description, parameters}`. It keeps what a real server would check
 * strictly (the token, the group, the topic, 1–4096 characters of text, the HTML parse mode's
 * tags and entities, callback data of 1–64 bytes, topic names of 1–128 characters) so a test
 * fails where the real API would refuse. Tests inject updates (a button press, a message) and
 * read back what the bot sent.
 */

export interface BotUser {
  id: number;
  is_bot?: boolean;
  first_name?: string;
  username?: string;
}

interface Entity {
  type: string;
  offset: number;
  length: number;
  language?: string;
  /** A text_link's target. */
  url?: string;
}

export interface InlineKeyboard {
  inline_keyboard: Array<Array<{ text: string; callback_data: string }>>;
}

export interface SentMessage {
  message_id: number;
  thread_id?: number;
  /** What the bot sent (HTML, or plain text when it sent entities). */
  sent: string;
  /** The text as a client shows it, and its formatting. */
  text: string;
  entities: Entity[];
  reply_markup?: InlineKeyboard;
  reply_to?: number;
  edits: number;
}

export interface Call {
  method: string;
  // biome-ignore lint/suspicious/noExplicitAny: the bot's JSON bodies are read field by field
  params: Record<string, any>;
  /** When the request arrived (epoch ms). */
  at: number;
  status: number;
}

interface Failure {
  status: number;
  description: string;
  retryAfter?: number;
  times: number;
}

export interface FakeBotApi {
  url: string;
  token: string;
  groupId: string;
  calls: Call[];
  messages: SentMessage[];
  topics: Array<{ message_thread_id: number; name: string }>;
  callbackAnswers: Array<{ callback_query_id: string; text?: string; show_alert?: boolean }>;
  /** A user presses the button of `message` whose label contains `label`. */
  press(user: BotUser, message: SentMessage, label: string): string;
  /** A user writes `text` in a topic (or in the general chat when threadId is undefined). */
  write(user: BotUser, threadId: number | undefined, text: string): number;
  /** The next `times` calls of `method` fail with this status (429 with `retry_after` seconds). */
  fail(
    method: string,
    status: number,
    options?: { retryAfter?: number; description?: string; times?: number },
  ): void;
  /** A person deleted a topic in the chat. */
  deleteTopic(threadId: number): void;
  /** Calls of a method, in order. */
  callsOf(method: string): Call[];
  until(check: () => boolean, timeoutMs?: number): Promise<void>;
  stop(): void;
}

const ALLOWED_TAGS = new Set([
  "b",
  "strong",
  "i",
  "em",
  "u",
  "ins",
  "s",
  "strike",
  "del",
  "code",
  "pre",
  "a",
  "blockquote",
]);
const ENTITY_TYPE: Record<string, string> = {
  b: "bold",
  strong: "bold",
  i: "italic",
  em: "italic",
  u: "underline",
  ins: "underline",
  s: "strikethrough",
  strike: "strikethrough",
  del: "strikethrough",
  code: "code",
  pre: "pre",
  a: "text_link",
  blockquote: "blockquote",
};
const NAMED: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"' };

class ApiRefusal extends Error {
  constructor(
    readonly status: number,
    description: string,
    readonly retryAfter?: number,
  ) {
    super(description);
  }
}

/** The HTML parse mode as the real API reads it: plain text plus entities, or a 400. */
export function parseHtml(html: string): { text: string; entities: Entity[] } {
  let text = "";
  const entities: Entity[] = [];
  const open: Array<{ tag: string; offset: number; language?: string; url?: string }> = [];
  const refuse = (why: string) => new ApiRefusal(400, `Bad Request: can't parse entities: ${why}`);
  for (let i = 0; i < html.length; ) {
    const c = html[i]!;
    if (c === "<") {
      const end = html.indexOf(">", i);
      if (end < 0) throw refuse(`Unclosed start tag at byte offset ${i}`);
      const inner = html.slice(i + 1, end);
      const closing = inner.startsWith("/");
      const tag = (closing ? inner.slice(1) : inner).split(/\s/)[0]!.toLowerCase();
      if (!ALLOWED_TAGS.has(tag)) throw refuse(`Unsupported start tag "${tag}" at byte offset ${i}`);
      if (closing) {
        const top = open.pop();
        if (top?.tag !== tag)
          throw refuse(`Unmatched end tag at byte offset ${i}, expected "</${top?.tag}>"`);
        if (text.length > top.offset) {
          const entity: Entity = {
            type: ENTITY_TYPE[tag]!,
            offset: top.offset,
            length: text.length - top.offset,
          };
          // `<pre><code class="language-x">` is one pre entity with a language, as the real API reports it.
          const last = entities.at(-1);
          if (
            tag === "pre" &&
            last?.type === "code" &&
            last.offset === entity.offset &&
            last.length === entity.length
          ) {
            entities.pop();
            if (last.language) entity.language = last.language;
          }
          if (tag === "code" && top.language) entity.language = top.language;
          if (tag === "a" && top.url !== undefined) entity.url = top.url;
          entities.push(entity);
        }
      } else {
        const language = /class="language-([\w+-]+)"/.exec(inner)?.[1];
        const href = /href="([^"]*)"/.exec(inner)?.[1];
        const url = href?.replace(/&(lt|gt|quot|amp);/g, (_m, name: string) => NAMED[name]!);
        open.push({ tag, offset: text.length, language, url });
      }
      i = end + 1;
    } else if (c === "&") {
      const m = /^&(#x[0-9a-f]+|#\d+|[a-z]+);/i.exec(html.slice(i));
      if (!m) throw refuse(`Character entity expected at byte offset ${i}`);
      const name = m[1]!;
      if (name.startsWith("#x")) text += String.fromCodePoint(Number.parseInt(name.slice(2), 16));
      else if (name.startsWith("#")) text += String.fromCodePoint(Number(name.slice(1)));
      else if (NAMED[name] !== undefined) text += NAMED[name];
      else throw refuse(`Unsupported HTML entity "&${name};" at byte offset ${i}`);
      i += m[0].length;
    } else if (c === ">") {
      throw refuse(`Unexpected end tag at byte offset ${i}`);
    } else {
      text += c;
      i++;
    }
  }
  if (open.length > 0) throw refuse(`Can't find end tag corresponding to start tag "${open.at(-1)!.tag}"`);
  return { text, entities };
}

export function startFakeBotApi(options: { token?: string; groupId?: string } = {}): FakeBotApi {
  const token = options.token ?? "123456:TEST-token_abc";
  const groupId = options.groupId ?? "-1001234567890";
  const calls: Call[] = [];
  const messages: SentMessage[] = [];
  const topics: FakeBotApi["topics"] = [];
  const deletedTopics = new Set<number>();
  const callbackAnswers: FakeBotApi["callbackAnswers"] = [];
  const failures = new Map<string, Failure>();
  const updates: Array<Record<string, unknown> & { update_id: number }> = [];
  const pollers = new Set<() => void>();
  let nextUpdate = 1;
  let nextMessage = 100;
  let nextThread = 10;

  function push(update: Record<string, unknown>): void {
    updates.push({ update_id: nextUpdate++, ...update });
    for (const wake of [...pollers]) wake();
  }

  function checkChat(chatId: unknown): void {
    if (String(chatId) !== groupId) throw new ApiRefusal(400, "Bad Request: chat not found");
  }

  function checkThread(thread: unknown): number | undefined {
    if (thread === undefined || thread === null) return undefined;
    const id = Number(thread);
    if (!topics.some((t) => t.message_thread_id === id) || deletedTopics.has(id)) {
      throw new ApiRefusal(400, "Bad Request: message thread not found");
    }
    return id;
  }

  function checkKeyboard(markup: unknown): InlineKeyboard | undefined {
    if (markup === undefined) return undefined;
    const keyboard = markup as InlineKeyboard;
    for (const row of keyboard.inline_keyboard ?? []) {
      for (const button of row) {
        const bytes = Buffer.byteLength(button.callback_data ?? "");
        if (bytes < 1 || bytes > 64) throw new ApiRefusal(400, "Bad Request: BUTTON_DATA_INVALID");
        if (!button.text)
          throw new ApiRefusal(400, "Bad Request: text buttons are unallowed in the inline keyboard");
      }
    }
    return keyboard.inline_keyboard?.length ? keyboard : undefined;
  }

  function render(p: Record<string, unknown>): { text: string; entities: Entity[] } {
    const raw = String(p.text ?? "");
    const parsed =
      p.parse_mode === "HTML" ? parseHtml(raw) : { text: raw, entities: (p.entities as Entity[]) ?? [] };
    if (parsed.text.trim().length === 0) throw new ApiRefusal(400, "Bad Request: message text is empty");
    if (parsed.text.length > 4096) throw new ApiRefusal(400, "Bad Request: message is too long");
    return parsed;
  }

  function asApiMessage(m: SentMessage) {
    return {
      message_id: m.message_id,
      chat: { id: Number(groupId), type: "supergroup", is_forum: true },
      ...(m.thread_id !== undefined ? { message_thread_id: m.thread_id, is_topic_message: true } : {}),
      from: { id: 42, is_bot: true, first_name: "ag bot", username: "ag_bot" },
      date: Math.floor(Date.now() / 1000),
      text: m.text,
      ...(m.entities.length ? { entities: m.entities } : {}),
      ...(m.reply_markup ? { reply_markup: m.reply_markup } : {}),
    };
  }

  function findMessage(p: Record<string, unknown>): SentMessage {
    checkChat(p.chat_id);
    const message = messages.find((m) => m.message_id === Number(p.message_id));
    if (!message) throw new ApiRefusal(400, "Bad Request: message to edit not found");
    return message;
  }

  const methods: Record<string, (p: Record<string, unknown>, request: Request) => unknown> = {
    getUpdates: async (p, request) => {
      const offset = Number(p.offset ?? 0);
      // Asking from an offset confirms every update before it: they are never sent again.
      while (updates.length > 0 && updates[0]!.update_id < offset) updates.shift();
      if (updates.length === 0 && Number(p.timeout ?? 0) > 0) {
        await new Promise<void>((resolve) => {
          const done = () => {
            pollers.delete(done);
            clearTimeout(timer);
            resolve();
          };
          const timer = setTimeout(done, Number(p.timeout) * 1000);
          pollers.add(done);
          request.signal.addEventListener("abort", done);
        });
      }
      return updates.filter((u) => u.update_id >= offset);
    },
    sendMessage: (p) => {
      checkChat(p.chat_id);
      const thread_id = checkThread(p.message_thread_id);
      const { text, entities } = render(p);
      const reply = p.reply_parameters as { message_id?: number } | undefined;
      const message: SentMessage = {
        message_id: nextMessage++,
        thread_id,
        sent: String(p.text),
        text,
        entities,
        reply_markup: checkKeyboard(p.reply_markup),
        reply_to: reply?.message_id,
        edits: 0,
      };
      messages.push(message);
      return asApiMessage(message);
    },
    createForumTopic: (p) => {
      checkChat(p.chat_id);
      const name = String(p.name ?? "");
      if (name.length < 1 || name.length > 128) throw new ApiRefusal(400, "Bad Request: TOPIC_NAME_INVALID");
      const topic = { message_thread_id: nextThread++, name };
      topics.push(topic);
      return { ...topic, icon_color: 7322096 };
    },
    answerCallbackQuery: (p) => {
      if (String(p.text ?? "").length > 200) throw new ApiRefusal(400, "Bad Request: MESSAGE_TOO_LONG");
      callbackAnswers.push({
        callback_query_id: String(p.callback_query_id),
        text: p.text as string | undefined,
        show_alert: p.show_alert as boolean | undefined,
      });
      return true;
    },
    editMessageText: (p) => {
      const message = findMessage(p);
      const { text, entities } = render(p);
      Object.assign(message, { sent: String(p.text), text, entities, edits: message.edits + 1 });
      // Like the real API: an edit without reply_markup drops the buttons.
      message.reply_markup = checkKeyboard(p.reply_markup);
      return asApiMessage(message);
    },
    editMessageReplyMarkup: (p) => {
      const message = findMessage(p);
      const keyboard = checkKeyboard(p.reply_markup);
      if (JSON.stringify(keyboard) === JSON.stringify(message.reply_markup)) {
        throw new ApiRefusal(400, "Bad Request: message is not modified");
      }
      message.reply_markup = keyboard;
      message.edits++;
      return asApiMessage(message);
    },
  };

  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    async fetch(request) {
      const at = Date.now();
      const match = /^\/bot([^/]+)\/(\w+)$/.exec(new URL(request.url).pathname);
      let status = 200;
      let body: unknown;
      let params: Record<string, unknown> = {};
      try {
        if (!match || request.method !== "POST") throw new ApiRefusal(404, "Not Found");
        if (match[1] !== token) throw new ApiRefusal(401, "Unauthorized");
        const method = match[2]!;
        params = (await request.json().catch(() => ({}))) as Record<string, unknown>;
        const failure = failures.get(method);
        if (failure) {
          if (--failure.times <= 0) failures.delete(method);
          throw new ApiRefusal(failure.status, failure.description, failure.retryAfter);
        }
        const handler = methods[method];
        if (!handler) throw new ApiRefusal(404, "Not Found: method not found");
        body = { ok: true, result: await handler(params, request) };
      } catch (error) {
        if (!(error instanceof ApiRefusal)) throw error;
        status = error.status;
        body = {
          ok: false,
          error_code: error.status,
          description: error.message,
          ...(error.retryAfter !== undefined ? { parameters: { retry_after: error.retryAfter } } : {}),
        };
      }
      calls.push({ method: match?.[2] ?? "?", params, at, status });
      return Response.json(body, { status });
    },
  });

  return {
    url: `http://127.0.0.1:${server.port}`,
    token,
    groupId,
    calls,
    messages,
    topics,
    callbackAnswers,
    press(user, message, label) {
      const button = message.reply_markup?.inline_keyboard.flat().find((b) => b.text.includes(label));
      if (!button) throw new Error(`message ${message.message_id} has no button "${label}"`);
      const id = `cb-${nextUpdate}`;
      push({
        callback_query: {
          id,
          from: user,
          message: asApiMessage(message),
          chat_instance: "1",
          data: button.callback_data,
        },
      });
      return id;
    },
    write(user, threadId, text) {
      const message_id = nextMessage++;
      push({
        message: {
          message_id,
          from: user,
          chat: { id: Number(groupId), type: "supergroup", is_forum: true },
          ...(threadId !== undefined ? { message_thread_id: threadId, is_topic_message: true } : {}),
          date: Math.floor(Date.now() / 1000),
          text,
        },
      });
      return message_id;
    },
    fail(method, status, opts = {}) {
      const description =
        opts.description ??
        (status === 429 ? `Too Many Requests: retry after ${opts.retryAfter ?? 1}` : `Error ${status}`);
      failures.set(method, { status, description, retryAfter: opts.retryAfter, times: opts.times ?? 1 });
    },
    deleteTopic(threadId) {
      deletedTopics.add(threadId);
    },
    callsOf: (method) => calls.filter((c) => c.method === method),
    async until(check, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      while (!check()) {
        if (Date.now() > deadline) throw new Error("the bot API did not see that in time");
        await Bun.sleep(10);
      }
    },
    stop() {
      for (const wake of [...pollers]) wake();
      server.stop(true);
    },
  };
}
