import type { TaskItem } from "../task-item.ts";

/** Claude Code's to-do list: its TodoWrite tool hands in the whole list each time it changes. */
export function claudeTaskList(toolName: string, input: unknown): TaskItem[] | null {
  if (toolName !== "TodoWrite") return null;
  const todos = (input as { todos?: unknown } | undefined)?.todos;
  if (!Array.isArray(todos)) return null;
  return todos.flatMap((todo) => {
    const { content, status } = (todo ?? {}) as { content?: unknown; status?: unknown };
    if (typeof content !== "string") return [];
    const known = status === "in_progress" || status === "completed" ? status : "pending";
    return [{ content, status: known }];
  });
}
