/** One item of an agent's task list (a to-do list, a plan), in neutral words. */
export interface TaskItem {
  content: string;
  status: "pending" | "in_progress" | "completed";
}
