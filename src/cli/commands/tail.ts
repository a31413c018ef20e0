import { defineCommand } from "citty";
import { isTerminal, type Session } from "../../sessions/index.ts";
import { sessionVerbArgs } from "../args.ts";
import { connect } from "../connect.ts";
import { followEvents } from "../events.ts";
import { colourEnabled, printLine, printNote } from "../output.ts";
import { resolveSession, sessionPath } from "../resolve.ts";
import { abortOnInterrupt } from "../signals.ts";
import { createTimeline, formatTimelineLine } from "../timeline.ts";

/** `ag tail <session>`: what happens in the session, a line each, until Ctrl+C or its end. */
export default defineCommand({
  meta: { name: "tail", description: "Follow a session's events until Ctrl+C or the session ends" },
  args: sessionVerbArgs("Every event as it came, one JSON object per line"),
  async run({ args }) {
    const { client } = connect(args);
    const { id } = await resolveSession(client, args.session);
    const path = sessionPath(id);
    const interrupt = abortOnInterrupt();
    const stop = new AbortController();
    const signal = AbortSignal.any([interrupt.signal, stop.signal]);
    const colour = colourEnabled();
    const timeline = createTimeline();
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
          if (args.json) printLine(JSON.stringify(event));
          else {
            const line = timeline(event);
            if (line) printLine(formatTimelineLine(event.timestamp, line, colour));
          }
          return event.event === "session.ended";
        },
        onReconnect: (why) => printNote(`reconnecting: ${why}`),
      });
    } finally {
      interrupt.release();
    }
  },
});
