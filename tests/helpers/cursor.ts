// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * Every message id of a session's transcript as the cursor gives it when read backwards, `limit`
 * at a time (`before_id` = the last page's `oldest_id`) until `has_more` is false: what a client
 * paging through it sees, in order. `get` answers a GET's body.
 */
export async function pagedIds(
  get: (path: string) => Promise<Json>,
  id: string,
  limit = 3,
): Promise<number[]> {
  const seen: number[] = [];
  let before: number | undefined;
  for (;;) {
    const page = await get(
      `/v1/sessions/${id}/transcript/cursor?limit=${limit}${before ? `&before_id=${before}` : ""}`,
    );
    seen.unshift(...page.messages.map((m: Json) => m.id as number));
    if (!page.has_more) return seen;
    before = page.oldest_id;
  }
}
