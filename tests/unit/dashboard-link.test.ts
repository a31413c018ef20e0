import { describe, expect, test } from "bun:test";
import { humanLinks } from "../../src/channels/link.ts";
import { EVENT_NAMES, NEEDS_HUMAN_EVENTS } from "../../src/events/names.ts";
import { sessionUrl } from "../../src/shared/dashboard-links.ts";
import { isAgError } from "../../src/shared/errors.ts";
import { sampleEvent } from "../helpers/deliveries.ts";

const ID = "0b5e55ed-0000-4000-8000-000000000001";

describe("the dashboard deep link (CONTRACT §10)", () => {
  test.each([
    ["http://localhost:9100/dashboard", `http://localhost:9100/dashboard/#/sessions/${ID}`],
    ["http://localhost:9100/dashboard/", `http://localhost:9100/dashboard/#/sessions/${ID}`],
    ["http://localhost:9100/dashboard//", `http://localhost:9100/dashboard/#/sessions/${ID}`],
    ["https://ag.example.test", `https://ag.example.test/#/sessions/${ID}`],
    ["https://ag.example.test/ui/#/old", `https://ag.example.test/ui/#/sessions/${ID}`],
    ["https://ag.example.test/ui?team=a", `https://ag.example.test/ui/?team=a#/sessions/${ID}`],
  ])("%s → exactly one slash before the route", (dashboardUrl, expected) => {
    expect(sessionUrl(dashboardUrl, ID)).toBe(expected);
  });

  test("a search hit's link opens the session at its message", () => {
    expect(sessionUrl("http://localhost:9100/dashboard", ID, 42)).toBe(
      `http://localhost:9100/dashboard/#/sessions/${ID}?at=42`,
    );
  });

  test("only events that need a human, and have a session, get one; a review's verdict links to the review", () => {
    const linkOf = humanLinks("https://ag.example.test/dashboard");
    const linked = EVENT_NAMES.filter((name) => linkOf(sampleEvent(name)) !== null);
    expect(linked).toEqual(
      EVENT_NAMES.filter(
        (name) => (NEEDS_HUMAN_EVENTS as readonly string[]).includes(name) || name === "consensus.completed",
      ),
    );
    const verdict = sampleEvent("consensus.completed");
    expect(linkOf(verdict)).toBe(
      `https://ag.example.test/dashboard/#/consensus/${(verdict.meta as { consensusId: string }).consensusId}`,
    );
    expect(linkOf(sampleEvent("status.stall"))).toBe("https://ag.example.test/dashboard/#/sessions/sess-1");
    expect(linkOf(sampleEvent("status.stall", { session: undefined }))).toBeNull();
  });

  test("the set: prompts and questions, their timeout, stalls, failed turns, a dead agent, a budget", () => {
    expect([...NEEDS_HUMAN_EVENTS].sort()).toEqual([
      "budget.reached",
      "budget.warning",
      "permission.requested",
      "session.stalled",
      "status.dead",
      "status.error",
      "status.permission",
      "status.permission_timeout",
      "status.plan",
      "status.question",
      "status.rate_limited",
      "status.stall",
    ]);
  });

  test("a dashboard URL that is no URL is a configuration error when the channel is made", () => {
    let caught: unknown;
    try {
      humanLinks("http://");
    } catch (error) {
      caught = error;
    }
    expect(isAgError(caught) && caught.code).toBe("CONFIG_INVALID");
  });
});
