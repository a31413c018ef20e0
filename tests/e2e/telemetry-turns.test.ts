import { afterAll, beforeAll, expect, test } from "bun:test";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";
import { attrs, startCollector } from "../helpers/otlp.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * Agent work as traces, on the REAL agent CLI through the compiled binary: a prompt sent through
 * the API is one trace from the request to the agent's turn and its tool calls, with the GenAI
 * attributes and the turn's tokens.
 */
let world: AgentWorld;
const collector = startCollector();

beforeAll(async () => {
  world = await startAgentWorld({
    SVC_OTEL_ENABLED: "true",
    SVC_OTEL_OTLP_ENDPOINT: collector.url,
    SVC_OTEL_SAMPLE_RATE: "1",
  });
}, 60_000);
afterAll(async () => {
  await world?.stop();
  collector.server.stop(true);
});

test("POST /send → session.deliver → invoke_agent claude → execute_tool Write, one trace with tokens", async () => {
  const created = await world.api<Json>("POST", "/v1/sessions", { workDir: world.workDir });
  const id = created.body.id as string;
  await world.waitFor(id, "idle", 60_000);
  const sent = await world.api<Json>("POST", `/v1/sessions/${id}/send`, { text: "edit file" });
  expect(sent.body).toEqual({ delivered: true, attempts: 1 });
  const waiting = await world.waitFor(id, "permission_prompt", 60_000);
  await world.api("POST", `/v1/sessions/${id}/approve`, {
    permissionId: (waiting.pendingPermission as Json).id,
  });
  await world.waitFor(id, "idle", 60_000);
  // The turn's span ends once its tokens are read; SIGTERM then flushes it.
  await Bun.sleep(2_000);
  await world.ag.stop();

  const spans = collector.spans();
  const one = (name: string) => {
    const found = spans.filter((s) => s.name === name);
    expect({ name, count: found.length }).toEqual({ name, count: 1 });
    return found[0]!;
  };
  const request = one("POST /v1/sessions/:id/send");
  const delivery = one("session.deliver");
  const turn = one("invoke_agent claude");
  const tool = one("execute_tool Write");
  expect(delivery).toMatchObject({ traceId: request.traceId, parentSpanId: request.spanId });
  expect(turn).toMatchObject({ traceId: request.traceId, parentSpanId: delivery.spanId });
  expect(tool).toMatchObject({ traceId: request.traceId, parentSpanId: turn.spanId });
  const turnAttributes = attrs(turn.attributes);
  expect(turnAttributes).toMatchObject({
    "gen_ai.operation.name": "invoke_agent",
    "gen_ai.agent.name": "claude",
    "ag.session.id": id,
    "ag.turn.end": "completed",
  });
  expect(turnAttributes["gen_ai.usage.output_tokens"]).toBeGreaterThan(0);
  expect(attrs(tool.attributes)).toMatchObject({
    "gen_ai.tool.name": "Write",
    "gen_ai.operation.name": "execute_tool",
  });
  // The approve, pressed while the turn ran, is a span of its own request's trace.
  const approve = one("session.approve");
  expect(approve.traceId).toBe(one("POST /v1/sessions/:id/approve").traceId);
}, 120_000);
