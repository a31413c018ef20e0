import { useSignal } from "@preact/signals";
import { api, describe } from "../api.ts";

interface SendResult {
  delivered: boolean;
  attempts: number;
  reason?: string;
  answered?: boolean;
}

const touch = () => matchMedia("(pointer: coarse)").matches;

/**
 * A prompt for the agent: Enter sends, Shift+Enter starts a new line (on a touch screen Enter is a
 * new line and the button sends); the text arrives as one message.
 */
export function SendBox({ sessionId, asking }: { sessionId: string; asking: boolean }) {
  const text = useSignal("");
  const busy = useSignal(false);
  const result = useSignal<{ ok: boolean; text: string } | null>(null);

  async function send() {
    const value = text.value;
    if (!value.trim() || busy.value) return;
    busy.value = true;
    result.value = null;
    try {
      const sent = await api<SendResult>(`/v1/sessions/${encodeURIComponent(sessionId)}/send`, {
        method: "POST",
        body: { text: value },
      });
      if (sent.delivered) {
        text.value = "";
        result.value = { ok: true, text: sent.answered ? "Answered." : "Delivered." };
      } else {
        result.value = { ok: false, text: `Not delivered: ${sent.reason ?? "the agent did not take it"}` };
      }
    } catch (e) {
      result.value = { ok: false, text: describe(e) };
    } finally {
      busy.value = false;
    }
  }

  return (
    <form
      class="send-box"
      onSubmit={(e) => {
        e.preventDefault();
        void send();
      }}
    >
      <label for="prompt" class="visually-hidden">
        {asking ? "Answer the agent" : "Message to the agent"}
      </label>
      <textarea
        id="prompt"
        rows={3}
        placeholder={
          asking
            ? "Answer (a number picks that option)…"
            : "Message the agent… (Enter sends, Shift+Enter new line)"
        }
        value={text.value}
        onInput={(e) => {
          text.value = (e.currentTarget as HTMLTextAreaElement).value;
        }}
        onKeyDown={(e) => {
          // On a touch screen Enter is the keyboard's only way to a new line: the button sends.
          if (e.key === "Enter" && !e.shiftKey && !e.isComposing && !touch()) {
            e.preventDefault();
            void send();
          }
        }}
      />
      <button type="submit" disabled={busy.value || !text.value.trim()}>
        {busy.value ? "Sending…" : "Send"}
      </button>
      {result.value && (
        <p class={result.value.ok ? "notice" : "error"} role="status">
          {result.value.text}
        </p>
      )}
    </form>
  );
}
