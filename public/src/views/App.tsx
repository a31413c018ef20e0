import { useRef } from "preact/hooks";
import { route } from "../router.ts";
import { ServerView } from "../server/ServerView.tsx";
import { lockMessage, ready, refresh, serverState, useToken } from "../store.ts";
import { liveState } from "../stream.ts";
import { ConsensusView } from "./ConsensusView.tsx";
import { NewSession } from "./NewSession.tsx";
import { SearchView } from "./SearchView.tsx";
import { SessionList } from "./SessionList.tsx";
import { SessionView } from "./SessionView.tsx";

const LIVE_WORDS = { off: "offline", connecting: "connecting…", live: "live", reconnecting: "reconnecting…" };
const SERVER_WORDS = {
  unknown: "connecting…",
  ok: "ok",
  degraded: "degraded",
  down: "unreachable",
  locked: "locked",
};

export function App() {
  const current = route.value;
  const locked = lockMessage.value !== null;
  return (
    <>
      <header class="top">
        <a class="brand" href="#/">
          ag
        </a>
        <nav aria-label="Main">
          <a
            href="#/"
            aria-current={
              current.view === "sessions" || current.view === "session" || current.view === "consensus"
                ? "page"
                : undefined
            }
          >
            Sessions
          </a>
          <a href="#/new" aria-current={current.view === "new" ? "page" : undefined}>
            New
          </a>
          <a href="#/search" aria-current={current.view === "search" ? "page" : undefined}>
            Search
          </a>
          <a href="#/server/metrics" aria-current={current.view === "server" ? "page" : undefined}>
            Server
          </a>
        </nav>
        <span
          id="server-status"
          class="badge"
          data-state={serverState.value === "down" ? "down" : serverState.value}
        >
          {SERVER_WORDS[serverState.value]}
        </span>
        <span
          id="live"
          class="live"
          data-state={liveState.value}
          role="status"
          title="The page follows the server's event stream: it changes as the sessions do"
        >
          {LIVE_WORDS[liveState.value]}
        </span>
        <button id="refresh" type="button" onClick={refresh}>
          Refresh
        </button>
      </header>
      <TokenForm hidden={!locked} message={lockMessage.value ?? ""} />
      {/* Views load what they show when they open: only once the server has let the page in. */}
      <main id="content" hidden={locked}>
        {!ready.value && <p class="muted">Connecting…</p>}
        {ready.value && current.view === "sessions" && <SessionList />}
        {ready.value && current.view === "session" && <SessionView id={current.id} at={current.at} />}
        {ready.value && current.view === "consensus" && <ConsensusView id={current.id} />}
        {ready.value && current.view === "new" && <NewSession />}
        {ready.value && current.view === "search" && <SearchView query={current.query} />}
        {ready.value && current.view === "server" && <ServerView page={current.page} />}
      </main>
    </>
  );
}

function TokenForm({ hidden, message }: { hidden: boolean; message: string }) {
  const input = useRef<HTMLInputElement>(null);
  return (
    <form
      id="token-form"
      hidden={hidden}
      onSubmit={(event) => {
        event.preventDefault();
        const value = input.current?.value ?? "";
        if (input.current) input.current.value = "";
        useToken(value);
      }}
    >
      <p>
        This server requires an API token. It stays in this tab's memory only and is gone when you close it.
      </p>
      <label>
        Token <input id="token" ref={input} type="password" autocomplete="off" required />
      </label>
      <button type="submit">Connect</button>
      <p id="token-error" class="error" role="alert">
        {message}
      </p>
    </form>
  );
}
