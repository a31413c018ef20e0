/**
 * Which turn a transcript line belongs to, by what the line says rather than where it sits in
 * the file: an agent may write a reply's line above its prompt's, or a turn's late line after the
 * next prompt (a busy machine), and `/read` (and so a consensus reviewer's answer) must still be
 * the latest turn's text.
 *
 * A line places itself by the turn id it carries (Codex's turn_id), else by its order — a number
 * that grows with time in the agent's own terms (Codex's line ordinal, a Gemini message's
 * timestamp, an OpenCode message id): it falls in the latest turn begun at or before it. A line
 * with neither belongs to the turn the file has reached (file order, as before). The latest turn
 * is the one begun last by order (by arrival among turns without one).
 */
export interface TurnLedger {
  /** A turn begins: a person's prompt (its text), or the agent's own turn start. */
  begin(turn: { id: string; order: number | null; prompt?: string }): void;
  /** A reply's text; a key written again (an upserted message) replaces its text. */
  text(key: string, text: string, at: TurnPlace): void;
  /** The turn has ended (true), or goes on (false: a tool round's results came back). */
  mark(ended: boolean, at: TurnPlace): void;
  /** The latest turn's text, its parts in order, joined by "\n". */
  output(): string;
  /** Whether the latest turn's last mark (by order) says it ended. */
  ended(): boolean;
  /** The latest turn's prompt, when it has one. */
  prompt(): string | null;
}

/** Where a line falls: its turn's id, and its order; either may be unknown (null). */
export interface TurnPlace {
  turn?: string | null;
  order?: number | null;
}

interface Turn {
  id: string;
  /** Its order, or null when only its lines named it so far (its start not read yet). */
  order: number | null;
  /** When it began, among turns: ties and turns without an order go by this. */
  arrival: number;
  prompt: string | null;
}

interface Item {
  turn: string | null;
  order: number | null;
  arrival: number;
}

/** The turns kept: the latest turn's late lines and early lines of one not begun yet are all that matter. */
const KEPT_ITEMS = 500;

export function createTurnLedger(): TurnLedger {
  const turns = new Map<string, Turn>();
  const texts = new Map<string, Item & { text: string }>();
  const marks: Array<Item & { ended: boolean }> = [];
  let latest: Turn | null = null;
  let arrivals = 0;

  /** Whether `a` began after `b`: by order when both have one, else by arrival. */
  function after(a: Turn, b: Turn): boolean {
    if (a.order !== null && b.order !== null && a.order !== b.order) return a.order > b.order;
    return a.arrival > b.arrival;
  }

  /** The item as placed now: a line without a turn id or an order is the latest turn's. */
  function place(at: TurnPlace): Item {
    const order = at.order ?? null;
    const turn = at.turn ?? (order === null ? (latest?.id ?? "") : null);
    return { turn, order, arrival: arrivals++ };
  }

  /** Whether an item falls in the latest turn. */
  function inLatest(item: Item): boolean {
    if (!latest) return item.turn === "" || item.turn === null;
    if (item.turn !== null) return item.turn === latest.id;
    // By order: after the latest turn's start, or at it and read after it (a turn without an
    // order takes none of these).
    if (latest.order === null || item.order === null) return false;
    return item.order > latest.order || (item.order === latest.order && item.arrival > latest.arrival);
  }

  const byPlace = (a: Item, b: Item) =>
    a.order !== null && b.order !== null && a.order !== b.order ? a.order - b.order : a.arrival - b.arrival;

  /** Forgets the oldest texts outside the latest turn, and the oldest marks, past KEPT_ITEMS. */
  function prune(): void {
    for (const [key, item] of texts) {
      if (texts.size <= KEPT_ITEMS) break;
      if (!inLatest(item)) texts.delete(key);
    }
    if (marks.length > KEPT_ITEMS) marks.splice(0, marks.length - KEPT_ITEMS);
  }

  return {
    begin({ id, order, prompt }) {
      const known = turns.get(id);
      const turn: Turn = known ?? { id, order, arrival: arrivals++, prompt: null };
      turn.order ??= order;
      if (prompt !== undefined) turn.prompt = prompt;
      turns.delete(id); // re-inserted: the Map's order is then recency
      turns.set(id, turn);
      if (turns.size > KEPT_ITEMS) turns.delete(turns.keys().next().value!);
      if (!latest || latest === turn || after(turn, latest)) latest = turn;
      prune();
    },
    text(key, text, at) {
      const before = texts.get(key);
      texts.set(key, { ...(before ?? place(at)), text });
      prune();
    },
    mark(ended, at) {
      marks.push({ ...place(at), ended });
      prune();
    },
    output() {
      return [...texts.values()]
        .filter(inLatest)
        .sort(byPlace)
        .map((item) => item.text)
        .join("\n");
    },
    ended() {
      const last = marks.filter(inLatest).sort(byPlace).at(-1);
      return last?.ended ?? false;
    },
    prompt: () => latest?.prompt ?? null,
  };
}
