import { useSignal } from "@preact/signals";
import type { Terminal as XTerm } from "@xterm/xterm";
import { useEffect, useRef } from "preact/hooks";
import { MAX_INPUT_BYTES } from "../../../src/terminal/protocol.ts";
import { urlToken } from "../api.ts";

/**
 * The font shrinks to fit the pane's width down to this floor and no further: below it nothing
 * can be read. A pane wider than that (120 columns on a phone) scrolls sideways, and says so; the
 * pane is never resized for a viewer (it is the agent's window, and other viewers').
 */
const FONT_FLOOR_PX = 9;
const FONT_MAX_PX = 14;
/** A monospace cell's width per pixel of font size, roughly. */
const CELL_WIDTH = 0.62;

/** Reconnects wait 1 s, 2 s … up to 15 s while the view is open and the session runs. */
const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 15_000;

type Phase = "connecting" | "live" | "ended" | "closed";

/** Why a terminal ended for good: its program exited, its window closed, its session ended, its key went. */
const FINAL = new Set(["exited", "closed", "session-ended", "revoked"]);

/** A long paste in pieces under the server's bound, cut between code points. */
function pieces(data: string): string[] {
  const out: string[] = [];
  let piece = "";
  let bytes = 0;
  for (const char of data) {
    const code = char.codePointAt(0)!;
    const size = code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    if (bytes + size > MAX_INPUT_BYTES) {
      out.push(piece);
      piece = "";
      bytes = 0;
    }
    piece += char;
    bytes += size;
  }
  if (piece) out.push(piece);
  return out;
}

/**
 * The program in the pane asks its terminal questions (device attributes, cursor position,
 * modes, colours); tmux answers them. xterm.js would answer too, through onData — and with
 * control taken, its answers would be typed into the agent's prompt. They are swallowed here.
 */
function silenceQueries(term: XTerm): { dispose(): void }[] {
  const p = term.parser;
  const handled = () => true;
  return [
    p.registerCsiHandler({ final: "c" }, handled),
    p.registerCsiHandler({ prefix: ">", final: "c" }, handled),
    p.registerCsiHandler({ prefix: "=", final: "c" }, handled),
    p.registerCsiHandler({ final: "n" }, handled),
    p.registerCsiHandler({ prefix: "?", final: "n" }, handled),
    p.registerCsiHandler({ intermediates: "$", final: "p" }, handled),
    p.registerCsiHandler({ prefix: "?", intermediates: "$", final: "p" }, handled),
    p.registerCsiHandler({ final: "t" }, handled),
    p.registerDcsHandler({ intermediates: "$", final: "q" }, handled),
    ...[4, 10, 11, 12].map((code) => p.registerOscHandler(code, (data) => data.includes("?"))),
  ];
}

const OPTIONS = {
  disableStdin: true,
  scrollback: 1000,
  fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace",
  fontSize: 13,
  theme: { background: "#111318", foreground: "#e6e6e6" },
};

/**
 * The agent's real screen, live: GET /v1/sessions/:id/terminal streams a snapshot, then the
 * pane's bytes as tmux writes them. Read-only until "Take control" (needs sessions:write).
 */
export function Terminal({ sessionId }: { sessionId: string }) {
  const host = useRef<HTMLElement>(null);
  const phase = useSignal<Phase>("connecting");
  const control = useSignal<"off" | "asked" | "on">("off");
  const message = useSignal<string | null>(null);
  const socket = useRef<WebSocket | null>(null);
  /** Columns of a pane too wide for the screen at the font floor (it scrolls sideways); null: it fits. */
  const overflow = useSignal<number | null>(null);

  useEffect(() => {
    let stop: (() => void) | null = null;
    let gone = false;
    // xterm.js is most of the page's weight: loaded when a terminal is first shown, not before.
    import("@xterm/xterm").then(({ Terminal }) => {
      if (!gone) stop = watch(new Terminal(OPTIONS));
    });
    return () => {
      gone = true;
      stop?.();
    };
  }, [sessionId]);

  function watch(term: XTerm): () => void {
    term.open(host.current as HTMLElement);
    const queries = silenceQueries(term);
    let closed = false;
    let attempt = 0;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const fit = () => {
      // The pane's size is the agent's: the terminal takes it, the font shrinks to fit (down to
      // the floor; a wider pane scrolls sideways). Again when the page's width changes.
      const el = host.current;
      if (!el) return;
      const fitting = Math.floor(el.clientWidth / (term.cols * CELL_WIDTH));
      term.options.fontSize = Math.max(FONT_FLOOR_PX, Math.min(FONT_MAX_PX, fitting));
      // Measured once xterm.js has laid the screen out at that size.
      requestAnimationFrame(() => {
        overflow.value = el.scrollWidth > el.clientWidth + 1 ? term.cols : null;
      });
    };
    const resize = (cols: number, rows: number) => {
      term.resize(cols, rows);
      fit();
    };
    const observer = new ResizeObserver(fit);
    observer.observe(host.current as HTMLElement);
    const input = term.onData((data) => {
      if (control.value !== "on") return;
      for (const part of pieces(data)) socket.current?.send(JSON.stringify({ type: "input", data: part }));
    });

    async function connect() {
      phase.value = "connecting";
      let token: string | null;
      try {
        token = await urlToken();
      } catch {
        return retry();
      }
      if (closed) return;
      const scheme = location.protocol === "https:" ? "wss" : "ws";
      const query = token ? `?token=${encodeURIComponent(token)}` : "";
      const ws = new WebSocket(
        `${scheme}://${location.host}/v1/sessions/${encodeURIComponent(sessionId)}/terminal${query}`,
      );
      ws.binaryType = "arraybuffer";
      socket.current = ws;
      ws.onmessage = (event) => {
        if (event.data instanceof ArrayBuffer) return term.write(new Uint8Array(event.data));
        let msg: { type?: string; [key: string]: unknown };
        try {
          msg = JSON.parse(event.data);
        } catch {
          return;
        }
        if (msg.type === "snapshot") {
          attempt = 0;
          phase.value = "live";
          term.reset();
          resize(Number(msg.cols) || 80, Number(msg.rows) || 24);
          // The snapshot places the cursor itself (relative to the pane's modes).
          term.write(String(msg.data ?? ""));
        } else if (msg.type === "control") {
          control.value = msg.granted ? "on" : "off";
          term.options.disableStdin = !msg.granted;
          message.value =
            msg.granted || msg.released ? null : `Control refused: ${msg.reason ?? "not allowed"}`;
          if (msg.granted) term.focus();
        } else if (msg.type === "ended") {
          // The pane or the session is gone for good; anything else (tmux lost, a pane that could
          // not be read) is worth another try while the view is open.
          if (FINAL.has(String(msg.reason))) phase.value = "ended";
        } else if (msg.type === "error") {
          message.value = String(msg.message ?? msg.error ?? "terminal error");
        }
      };
      ws.onclose = () => {
        if (socket.current === ws) socket.current = null;
        control.value = "off";
        term.options.disableStdin = true;
        if (closed || phase.value === "ended") return;
        retry();
      };
    }
    function retry() {
      if (closed) return;
      phase.value = "closed";
      timer = setTimeout(connect, Math.min(RETRY_FIRST_MS * 2 ** attempt++, RETRY_MAX_MS));
    }
    void connect();
    return () => {
      closed = true;
      if (timer) clearTimeout(timer);
      observer.disconnect();
      for (const query of queries) query.dispose();
      input.dispose();
      socket.current?.close();
      term.dispose();
    };
  }

  return (
    <section class="terminal" aria-labelledby="terminal-title">
      <div class="terminal-head">
        <h3 id="terminal-title">Terminal</h3>
        <span class="terminal-state" data-state={phase.value}>
          {phase.value === "live" ? (control.value === "on" ? "you have control" : "watching") : phase.value}
        </span>
        {phase.value === "live" && control.value !== "on" && (
          <button
            type="button"
            id="take-control"
            onClick={() => {
              control.value = "asked";
              socket.current?.send(JSON.stringify({ type: "control" }));
            }}
          >
            Take control
          </button>
        )}
        {control.value === "on" && (
          <button
            type="button"
            onClick={() => {
              control.value = "off";
              socket.current?.send(JSON.stringify({ type: "release" }));
            }}
          >
            Release
          </button>
        )}
      </div>
      {message.value && <p class="error">{message.value}</p>}
      {overflow.value !== null && (
        <p class="terminal-fit" id="terminal-fit">
          The agent's screen is {overflow.value} columns wide: scroll it sideways to see the rest.
        </p>
      )}
      <section
        ref={host}
        class="xterm-host"
        aria-label="The agent's screen"
        // A screen wider than the page scrolls by keyboard too.
        tabIndex={overflow.value !== null ? 0 : undefined}
      />
    </section>
  );
}
