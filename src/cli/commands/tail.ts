import { defineCommand } from "citty";
import { isTerminal, type Session } from "../../sessions/index.ts";
import { GLOBAL_ARGS, SESSION_ID_ARG } from "../args.ts";
import { connect, resolveSessionId } from "../connect.ts";
import { followEvents } from "../events.ts";
import { colourEnabled, printLine, printNote } from "../output.ts";
import { abortOnInterrupt } from "../signals.ts";
import { eventLine } from "../views.ts";

/** `ag tail <id>`: the session's events as they happen, until Ctrl+C or the session ends. */
export default defineCommand({
  meta: { name: "tail", description: "Follow a session's events until Ctrl+C or the session ends" },
  args: {
    ...GLOBAL_ARGS,
    id: SESSION_ID_ARG,
    json: { type: "boolean", description: "One JSON object per event and line" },
  },
  async run({ args }) {
    const { client } = connect(args);
    const id = await resolveSessionId(client, args.id);
    const path = `/v1/sessions/${encodeURIComponent(id)}`;
    const interrupt = abortOnInterrupt();
    const stop = new AbortController();
    const signal = AbortSignal.any([interrupt.signal, stop.signal]);
    const colour = colourEnabled();
    let announced = false;
    try {
      await followEvents(client, `${path}/events`, {
        signal,
        onOpen() {
          // Checked once the stream holds our subscription: an end after this arrives as an event.
          void client.get<Session>(path).then(
            (session) => {
              if (isTerminal(session.status)) {
                printNote(`session ${session.name} has ended (${session.status})`);
                stop.abort();
              } else if (!announced) {
                announced = true;
                printNote(`following session ${session.name} (${session.id}) · Ctrl+C to stop`);
              }
            },
            () => {},
          );
        },
        onEvent(event) {
          printLine(args.json ? JSON.stringify(event) : eventLine(event, colour));
          return event.event === "session.ended";
        },
        onReconnect: (why) => printNote(`reconnecting: ${why}`),
      });
    } finally {
      interrupt.release();
    }
  },
});
