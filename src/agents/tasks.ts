import { claudeTaskList } from "./claude/todos.ts";
import type { TaskItem } from "./task-item.ts";

export type { TaskItem };

/** The agents whose tools hand in a task list: each answers null for any other tool. */
const READERS: ReadonlyArray<(toolName: string, input: unknown) => TaskItem[] | null> = [claudeTaskList];

/** The task list a tool call hands in, or null when the tool is not one that does. */
export function taskListOf(toolName: string | undefined, input: unknown): TaskItem[] | null {
  if (!toolName) return null;
  for (const read of READERS) {
    const items = read(toolName, input);
    if (items) return items;
  }
  return null;
}
