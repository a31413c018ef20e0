import { useSignal } from "@preact/signals";
import { ApiError, api, describe } from "../api.ts";
import type { PendingPermission, Session, TranscriptMessage } from "../types.ts";
import { Diff } from "./Diff.tsx";
import { pendingToolUse } from "./transcript-feed.ts";

/**
 * What the agent waits for, with the whole context: the command, the file and its diff, the
 * plan, or the question's options; answered here. A card answered elsewhere meanwhile says so.
 */
export function PendingCard({
  session,
  messages,
  onDone,
}: {
  session: Session;
  messages: TranscriptMessage[];
  onDone(): void;
}) {
  const pending = session.pendingPermission;
  const busy = useSignal(false);
  const notice = useSignal<string | null>(null);
  const error = useSignal<string | null>(null);
  const text = useSignal("");
  if (!pending) return null;
  const path = `/v1/sessions/${encodeURIComponent(session.id)}`;

  async function act(route: string, body: Record<string, unknown>) {
    busy.value = true;
    error.value = null;
    try {
      await api(`${path}/${route}`, { method: "POST", body: { ...body, permissionId: pending!.id } });
      notice.value = null;
    } catch (e) {
      // Answered elsewhere (terminal, chat, another tab): not a failure, the card is stale.
      if (isStale(e)) notice.value = `This was already answered elsewhere (${describe(e)}).`;
      else error.value = describe(e);
    } finally {
      busy.value = false;
      onDone();
    }
  }

  const call = pending.kind === "tool" || pending.kind === "plan" ? pendingToolUse(messages, pending) : null;
  return (
    <section
      class="pending-card"
      id="pending"
      aria-labelledby="pending-title"
      data-kind={pending.kind}
      data-id={pending.id}
    >
      <h3 id="pending-title">{title(pending)}</h3>
      {pending.kind === "question" ? (
        <Question
          pending={pending}
          disabled={busy.value}
          answer={(body) => act("answer", body)}
          text={text}
        />
      ) : (
        <>
          <Context pending={pending} call={call} />
          <div class="decide">
            <button type="button" class="approve" disabled={busy.value} onClick={() => act("approve", {})}>
              Approve
            </button>
            <button type="button" class="reject" disabled={busy.value} onClick={() => act("reject", {})}>
              Reject
            </button>
          </div>
        </>
      )}
      {notice.value && (
        <p class="notice stale" role="status">
          {notice.value}
        </p>
      )}
      {error.value && (
        <p class="error" role="alert">
          {error.value}
        </p>
      )}
    </section>
  );
}

/** The prompt is gone or is another one now: someone answered it first. */
const isStale = (e: unknown) =>
  e instanceof ApiError && (e.code === "NO_PENDING_PERMISSION" || e.code === "PERMISSION_MISMATCH");

function title(p: PendingPermission): string {
  if (p.kind === "question") return "The agent asks";
  if (p.kind === "plan") return "Approve the plan?";
  if (p.kind === "trust") return "Trust this folder?";
  return p.tool ? `Allow ${p.tool}?` : "Allow this?";
}

function Context({ pending, call }: { pending: PendingPermission; call: TranscriptMessage | null }) {
  const input = (call?.toolInput ?? {}) as Record<string, unknown>;
  const str = (key: string) => (typeof input[key] === "string" ? (input[key] as string) : undefined);
  const tool = call?.toolName ?? pending.tool;
  if (pending.kind === "plan" || tool === "ExitPlanMode") {
    return <pre class="plan">{str("plan") ?? pending.dialog ?? pending.detail}</pre>;
  }
  if (tool === "Bash" && str("command") !== undefined) {
    return (
      <>
        {str("description") && <p>{str("description")}</p>}
        <pre class="command">{str("command")}</pre>
      </>
    );
  }
  if ((tool === "Write" || tool === "Edit" || tool === "MultiEdit") && str("file_path")) {
    const edits =
      tool === "Write"
        ? [{ old_string: "", new_string: str("content") ?? "" }]
        : tool === "Edit"
          ? [{ old_string: str("old_string") ?? "", new_string: str("new_string") ?? "" }]
          : ((input.edits as { old_string: string; new_string: string }[] | undefined) ?? []);
    return (
      <>
        <p class="file">
          <code>{str("file_path")}</code>
          {tool === "Write" ? " (whole file)" : ""}
        </p>
        {edits.map((edit, n) => (
          <Diff
            key={n}
            before={edit.old_string}
            after={edit.new_string}
            label={`change ${n + 1} to ${str("file_path")}`}
          />
        ))}
      </>
    );
  }
  return (
    <>
      <pre class="detail">{pending.detail}</pre>
      {call && <pre class="input">{JSON.stringify(call.toolInput, null, 2)}</pre>}
      {!call && pending.kind === "tool" && (
        <p class="muted">
          The transcript does not yet show which call this is: the line above is the agent's own.
        </p>
      )}
    </>
  );
}

function Question({
  pending,
  disabled,
  answer,
  text,
}: {
  pending: PendingPermission;
  disabled: boolean;
  answer(body: { option?: number; text?: string }): void;
  text: { value: string };
}) {
  return (
    <>
      <p class="question">{pending.question ?? pending.detail}</p>
      {pending.questions && pending.questions > 1 && (
        <p class="muted">One of {pending.questions} questions.</p>
      )}
      {pending.multiSelect && (
        <p class="notice">This question takes several options: answer it in the terminal.</p>
      )}
      <fieldset class="options">
        <legend class="visually-hidden">Options</legend>
        {(pending.options ?? []).map((o) => (
          <button
            type="button"
            class="option"
            key={o.index}
            disabled={disabled || pending.multiSelect}
            onClick={() => answer({ option: o.index })}
          >
            <span class="index">{o.index}.</span> {o.label}
            {o.description && <span class="description">{o.description}</span>}
          </button>
        ))}
      </fieldset>
      <form
        class="own-answer"
        onSubmit={(e) => {
          e.preventDefault();
          if (text.value.trim()) answer({ text: text.value.trim() });
        }}
      >
        <label>
          Your own answer{" "}
          <input
            value={text.value}
            disabled={pending.multiSelect}
            maxLength={4096}
            onInput={(e) => {
              text.value = (e.currentTarget as HTMLInputElement).value;
            }}
          />
        </label>
        <button type="submit" disabled={disabled || pending.multiSelect || !text.value.trim()}>
          Answer
        </button>
      </form>
    </>
  );
}
