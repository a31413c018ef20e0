import { type Static, Type } from "@sinclair/typebox";
import type { AgentAdapter } from "../agents/agent.ts";
import { type Session, Session as SessionSchema } from "../sessions/index.ts";
import type { TmuxPane } from "../tmux/tmux.ts";
import type { SystemProcess } from "./processes.ts";

export const SwarmProcess = Type.Object({
  pid: Type.Integer(),
  agent: Type.String({ description: "which agent CLI it is (GET /v1/agents)" }),
  command: Type.String({ description: "the command line (truncated to 512 characters)" }),
  cwd: Type.Union([Type.String(), Type.Null()]),
  managed: Type.Boolean({ description: "runs in one of ag's sessions" }),
  sessionId: Type.Union([Type.String(), Type.Null()]),
});

export type SwarmNode = Session & { children: SwarmNode[] };
/** A session with its teammates (each one of these again); validated one level deep. */
const SwarmNodeSchema = Type.Unsafe<SwarmNode>(
  Type.Object({
    ...SessionSchema.properties,
    children: Type.Array(Type.Object({ id: Type.String() }), { description: "teammates, as trees" }),
  }),
);

export const Swarm = Type.Object({
  sessions: Type.Array(SwarmNodeSchema, { description: "sessions as a tree: teammates under their parent" }),
  processes: Type.Array(SwarmProcess, { description: "agent CLI processes found on the system" }),
  summary: Type.Object({
    sessions: Type.Integer(),
    active: Type.Integer(),
    byStatus: Type.Record(Type.String(), Type.Integer()),
    processes: Type.Integer(),
    managed: Type.Integer(),
    unmanaged: Type.Integer(),
  }),
});
export type Swarm = Static<typeof Swarm>;

/** Sessions under their parents (a parent that is gone makes its children roots). */
export function sessionTree(sessions: Session[]): SwarmNode[] {
  const nodes = new Map(sessions.map((s) => [s.id, { ...s, children: [] as SwarmNode[] }]));
  const roots: SwarmNode[] = [];
  for (const node of nodes.values()) {
    const parent = node.parentId ? nodes.get(node.parentId) : undefined;
    if (parent) parent.children.push(node);
    else roots.push(node);
  }
  return roots;
}

/**
 * The agent processes on the system, each tied to the session whose pane runs it (the pane's
 * process, or a descendant of it) when there is one.
 */
export function agentProcesses(
  processes: SystemProcess[],
  panes: Pick<TmuxPane, "pid" | "tag">[],
  agents: ReadonlyArray<Pick<AgentAdapter, "isAgentProcess" | "name">>,
): Static<typeof SwarmProcess>[] {
  const byPid = new Map(processes.map((p) => [p.pid, p]));
  const sessionOfPid = new Map<number, string>();
  for (const pane of panes) if (pane.pid !== null && pane.tag) sessionOfPid.set(pane.pid, pane.tag);
  const sessionOf = (pid: number): string | null => {
    for (let at = byPid.get(pid), hops = 0; at && hops < 64; at = byPid.get(at.ppid), hops++) {
      const session = sessionOfPid.get(at.pid);
      if (session) return session;
    }
    return null;
  };
  return processes
    .flatMap((p) => {
      const agent = agents.find((a) => a.isAgentProcess(p.argv));
      return agent ? [{ p, agent: agent.name }] : [];
    })
    .map(({ p, agent }) => {
      const sessionId = sessionOf(p.pid);
      return {
        pid: p.pid,
        agent,
        command: p.argv.join(" ").slice(0, 512),
        cwd: p.cwd,
        managed: sessionId !== null,
        sessionId,
      };
    })
    .sort((a, b) => a.pid - b.pid);
}
