import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import type { AgentAdapter, AgentObservation } from "../../src/agents/agent.ts";
import { PERMISSION_MODES, type PendingPermission } from "../../src/agents/vocabulary.ts";
import { createTranscriptIndex } from "../../src/transcript/index.ts";

/**
 * What every agent adapter must do with what its CLI really produced: captured screens of each
 * state and dialog, captured hook payloads, a captured conversation file. One description per
 * adapter (tests/fixtures/agents/<name>/contract.ts) with the files of the CLI version it was
 * captured from; tests/contract/agents.test.ts runs them all, and fails for an adapter without one.
 */

type ObservationKind = AgentObservation["kind"];

export interface ScreenCase {
  /** A captured pane (`tmux capture-pane -p`), relative to the fixtures' folder. */
  file: string;
  /** What the screen says. */
  kind: ObservationKind;
  /** For a dialog: which kind of pending prompt it is. */
  request?: PendingPermission["kind"];
  /** The input box: shown empty, shown with this text, or not shown (null). */
  input?: string | null;
}

export interface AdapterContract {
  adapter: AgentAdapter;
  /** The CLI version the fixtures were captured from. */
  version: string;
  /** Where the files are: an absolute folder. */
  dir: string;
  screens: ScreenCase[];
  /** Hook payloads as captured, one JSON object per line, and how to read one line. */
  hooks?: {
    file: string;
    line(raw: Record<string, unknown>): { event: string; payload: Record<string, unknown> };
    /** What each event means (null: nothing for the state); every event captured must be listed. */
    expect: Record<string, ObservationKind | null>;
  };
  transcript: {
    file: string;
    /** The prompts the conversation holds, in order (as the agent recorded them). */
    prompts: string[];
    /** Text the last turn's answer contains (`/read`): not empty. */
    output: string;
    toolCalls: number;
  };
}

export function adapterContract(c: AdapterContract): void {
  const read = (file: string) => readFileSync(`${c.dir}/${file}`, "utf8");
  const { adapter } = c;

  describe(`${adapter.name} ${c.version}: the adapter contract`, () => {
    test("names itself: id, display name, provider, its CLI and npm package", () => {
      expect(adapter.name).toMatch(/^[a-z][a-z0-9-]*$/);
      expect(adapter.displayName.length).toBeGreaterThan(2);
      expect(adapter.provider.length).toBeGreaterThan(2);
      expect(adapter.cli.command.length).toBeGreaterThan(0);
      expect(adapter.cli.package.length).toBeGreaterThan(0);
      expect(adapter.drivers.length).toBeGreaterThan(0);
      for (const mode of adapter.permissionModes) expect(PERMISSION_MODES).toContain(mode);
      expect(adapter.permissionModes).toContain("default");
    });

    for (const screen of c.screens) {
      test(`screen ${screen.file} reads as ${screen.kind}${screen.request ? ` (${screen.request})` : ""}`, () => {
        const reading = adapter.readScreen(read(screen.file));
        expect(reading.observation.kind).toBe(screen.kind);
        if (screen.request) {
          const observation = reading.observation as Extract<AgentObservation, { kind: "permission" }>;
          expect(observation.request.kind).toBe(screen.request);
          expect(observation.request.detail.length).toBeGreaterThan(0);
        }
        if (screen.input !== undefined) expect(reading.input).toBe(screen.input);
        // What moves by itself (spinners, timers) is not activity: the key is stable for a screen.
        expect(adapter.readScreen(read(screen.file)).activityKey).toBe(reading.activityKey);
      });
    }

    test("every state a session can be in has a captured screen", () => {
      const kinds = new Set(c.screens.map((s) => s.kind));
      for (const kind of ["screen-idle", "screen-working", "permission"] as const)
        expect(kinds).toContain(kind);
      const requests = new Set(c.screens.map((s) => s.request).filter(Boolean));
      expect(requests).toContain("tool");
    });

    test("keys: submit, interrupt, escape, clear the input line; approve and reject every dialog kind", () => {
      for (const keys of [
        adapter.keys.submit,
        adapter.keys.interrupt,
        adapter.keys.escape,
        adapter.keys.clearInput,
      ])
        expect(keys.length).toBeGreaterThan(0);
      for (const kind of ["tool", "plan", "trust"] as const) {
        expect(adapter.keys.approve({ kind }).length).toBeGreaterThan(0);
        expect(adapter.keys.reject({ kind }).length).toBeGreaterThan(0);
      }
    });

    if (c.hooks) {
      const hooks = c.hooks;
      test(`hook payloads of ${hooks.file} read as their events mean`, () => {
        // Only the events the adapter registers can reach it (a capture may hold more).
        const lines = read(hooks.file)
          .split("\n")
          .filter((l) => l.trim())
          .map((l) => hooks.line(JSON.parse(l)))
          .filter((l) => adapter.hooks.events.includes(l.event));
        expect(lines.length).toBeGreaterThan(0);
        for (const { event, payload } of lines) {
          expect(Object.keys(hooks.expect)).toContain(event);
          const reading = adapter.hooks.read(event, payload);
          expect([event, reading.observation?.kind ?? null]).toEqual([event, hooks.expect[event]!]);
        }
      });
    }

    test(`the conversation ${c.transcript.file}: prompts, answer, tool calls, tokens, cursor ids`, () => {
      const text = read(c.transcript.file);
      const reader = adapter.transcript.createReader();
      const prompts: string[] = [];
      for (const line of text.split("\n").filter((l) => l.trim())) {
        const meaning = reader.add(line);
        if (meaning.observation?.kind === "prompt-submitted") prompts.push(meaning.observation.text);
      }
      expect(prompts.map((p) => p.trim())).toEqual(c.transcript.prompts);
      expect(c.transcript.output.length).toBeGreaterThan(0);
      expect(reader.output()).toContain(c.transcript.output);
      expect(reader.turnEnded()).toBe(true);
      expect(reader.summary().toolCalls).toBe(c.transcript.toolCalls);
      const tokens = reader.tokens();
      expect(tokens.input + tokens.output).toBeGreaterThan(0);
    });

    test(`the cursor pages ${c.transcript.file} with stable ids, page after page`, async () => {
      const path = `${c.dir}/${c.transcript.file}`;
      const first = createTranscriptIndex(path, adapter.transcript.format);
      const again = createTranscriptIndex(path, adapter.transcript.format);
      await Promise.all([first.scan(), again.scan()]);
      const newest = await first.page({ limit: 3 });
      expect(newest.messages.length).toBeGreaterThan(0);
      expect(await again.page({ limit: 3 })).toEqual(newest);
      const older = await first.page({ limit: 3, beforeId: newest.oldest_id });
      expect(older.messages.every((m) => m.id < newest.oldest_id)).toBe(true);
      const roles = new Set((await first.page({ limit: 200 })).messages.map((m) => m.role));
      expect(roles).toContain("user");
      expect(roles).toContain("assistant");
    });
  });
}
