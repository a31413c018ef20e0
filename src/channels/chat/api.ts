import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { DeliveryError, parseRetryAfter } from "../channel.ts";

/**
 * A client of the common bot HTTP API (CONTRACT §5): `POST {base}/bot<token>/<method>` with a JSON
 * body, answered `{ok: true, result}` or `{ok: false, error_code, description, parameters}`.
 * Only the fields ag reads are typed; the server may send more.
 */

export const ChatUser = Type.Object({
  id: Type.Number(),
  is_bot: Type.Optional(Type.Boolean()),
  first_name: Type.Optional(Type.String()),
  username: Type.Optional(Type.String()),
});
export type ChatUser = Static<typeof ChatUser>;

export const MessageEntity = Type.Object({
  type: Type.String(),
  offset: Type.Number(),
  length: Type.Number(),
  language: Type.Optional(Type.String()),
  url: Type.Optional(Type.String()),
});
export type MessageEntity = Static<typeof MessageEntity>;

export const ChatMessage = Type.Object({
  message_id: Type.Number(),
  chat: Type.Object({ id: Type.Number() }),
  message_thread_id: Type.Optional(Type.Number()),
  from: Type.Optional(ChatUser),
  text: Type.Optional(Type.String()),
  entities: Type.Optional(Type.Array(MessageEntity)),
});
export type ChatMessage = Static<typeof ChatMessage>;

export const CallbackQuery = Type.Object({
  id: Type.String(),
  from: ChatUser,
  message: Type.Optional(ChatMessage),
  data: Type.Optional(Type.String()),
});
export type CallbackQuery = Static<typeof CallbackQuery>;

export const Update = Type.Object({
  update_id: Type.Number(),
  message: Type.Optional(ChatMessage),
  callback_query: Type.Optional(CallbackQuery),
});
export type Update = Static<typeof Update>;

export interface InlineButton {
  text: string;
  callback_data: string;
}
export interface InlineKeyboard {
  inline_keyboard: InlineButton[][];
}

export interface BotApi {
  /** Raw call; throws a BotApiError (a DeliveryError) on any failure. */
  call<T>(method: string, params: Record<string, unknown>, signal?: AbortSignal): Promise<T>;
  /** Long polling: held by the server up to `timeoutSeconds` when nothing is new. */
  getUpdates(offset: number, timeoutSeconds: number, signal?: AbortSignal): Promise<Update[]>;
  sendMessage(params: SendMessage, signal?: AbortSignal): Promise<ChatMessage>;
  createForumTopic(
    chatId: string,
    name: string,
    signal?: AbortSignal,
  ): Promise<{ message_thread_id: number }>;
  answerCallbackQuery(id: string, text: string, alert: boolean, signal?: AbortSignal): Promise<void>;
  editMessageText(params: EditMessageText, signal?: AbortSignal): Promise<void>;
  removeKeyboard(chatId: string, messageId: number, signal?: AbortSignal): Promise<void>;
}

export interface SendMessage {
  chat_id: string;
  text: string;
  parse_mode?: "HTML";
  message_thread_id?: number;
  reply_markup?: InlineKeyboard;
  reply_parameters?: { message_id: number; allow_sending_without_reply?: boolean };
  link_preview_options?: { is_disabled: boolean };
}

export interface EditMessageText {
  chat_id: string;
  message_id: number;
  text: string;
  entities?: MessageEntity[];
  reply_markup?: InlineKeyboard;
}

/** A failed call; `description` is the server's reason ("Bad Request: message thread not found"). */
export class BotApiError extends DeliveryError {
  constructor(
    message: string,
    retryable: boolean,
    retryAfterMs: number | undefined,
    readonly status: number | null,
    readonly description: string,
  ) {
    super(message, retryable, retryAfterMs);
  }
}

interface Answer {
  ok?: boolean;
  result?: unknown;
  error_code?: number;
  description?: string;
  parameters?: { retry_after?: number };
}

export function createBotApi(options: { base: string; token: string; fetch?: typeof fetch }): BotApi {
  const doFetch = options.fetch ?? fetch;
  const root = `${options.base.replace(/\/+$/, "")}/bot${options.token}`;
  // The token is in the URL: no message that leaves this file (dead letters, logs) may carry it.
  const scrub = (text: string) => (options.token ? text.split(options.token).join("<token>") : text);

  async function call<T>(method: string, params: Record<string, unknown>, signal?: AbortSignal): Promise<T> {
    let response: Response;
    try {
      response = await doFetch(`${root}/${method}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(params),
        signal,
        redirect: "manual",
      });
    } catch (error) {
      const why = scrub((error as Error).message);
      throw new BotApiError(`${method}: request failed: ${why}`, true, undefined, null, why);
    }
    const answer = (await response.json().catch(() => ({}))) as Answer;
    if (response.ok && answer.ok === true) return answer.result as T;
    const status = answer.error_code ?? response.status;
    const description = scrub(answer.description ?? `HTTP ${response.status}`);
    const retryAfterSeconds = answer.parameters?.retry_after;
    const retryAfterMs =
      typeof retryAfterSeconds === "number"
        ? retryAfterSeconds * 1000
        : parseRetryAfter(response.headers.get("retry-after"));
    const retryable = status === 408 || status === 429 || status >= 500;
    throw new BotApiError(
      `${method}: ${status} ${description}`,
      retryable,
      retryAfterMs,
      status,
      description,
    );
  }

  return {
    call,
    async getUpdates(offset, timeoutSeconds, signal) {
      const updates = await call<unknown[]>(
        "getUpdates",
        { offset, timeout: timeoutSeconds, allowed_updates: ["message", "callback_query"] },
        signal,
      );
      // What we cannot read is skipped, but its id still moves the offset on (or it would come back forever).
      return (Array.isArray(updates) ? updates : []).map((u) =>
        Value.Check(Update, u) ? u : { update_id: (u as { update_id?: number })?.update_id ?? -1 },
      );
    },
    sendMessage: (params, signal) => call<ChatMessage>("sendMessage", { ...params }, signal),
    createForumTopic: (chatId, name, signal) =>
      call<{ message_thread_id: number }>("createForumTopic", { chat_id: chatId, name }, signal),
    async answerCallbackQuery(id, text, alert, signal) {
      await call("answerCallbackQuery", { callback_query_id: id, text, show_alert: alert }, signal);
    },
    async editMessageText(params, signal) {
      await call("editMessageText", { ...params }, signal);
    },
    async removeKeyboard(chatId, messageId, signal) {
      await call(
        "editMessageReplyMarkup",
        { chat_id: chatId, message_id: messageId, reply_markup: { inline_keyboard: [] } },
        signal,
      );
    },
  };
}
