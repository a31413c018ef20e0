import type { ServerPage } from "../router.ts";
import { SERVER_PAGES } from "../router.ts";
import { Audit } from "./Audit.tsx";
import { Channels } from "./Channels.tsx";
import { Keys } from "./Keys.tsx";
import { Memory } from "./Memory.tsx";
import { Metrics } from "./Metrics.tsx";
import { Pipelines } from "./Pipelines.tsx";

const TITLES: Record<ServerPage, string> = {
  metrics: "Metrics",
  channels: "Channels",
  audit: "Audit log",
  pipelines: "Pipelines",
  memory: "Memory",
  keys: "API keys",
};

export function ServerView({ page }: { page: ServerPage }) {
  return (
    <section class="server" aria-labelledby="server-title">
      <h2 id="server-title" class="visually-hidden">
        Server
      </h2>
      <nav class="tabs" aria-label="Server views">
        {SERVER_PAGES.map((p) => (
          <a key={p} href={`#/server/${p}`} aria-current={p === page ? "page" : undefined}>
            {TITLES[p]}
          </a>
        ))}
      </nav>
      {page === "metrics" && <Metrics />}
      {page === "channels" && <Channels />}
      {page === "audit" && <Audit />}
      {page === "pipelines" && <Pipelines />}
      {page === "memory" && <Memory />}
      {page === "keys" && <Keys />}
    </section>
  );
}

export function Failure({ text }: { text: string | null }) {
  return text ? (
    <p class="error" role="alert">
      {text}
    </p>
  ) : null;
}
