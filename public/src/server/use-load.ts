import { type Signal, useSignal } from "@preact/signals";
import { useEffect, useRef } from "preact/hooks";
import { api, describe } from "../api.ts";

export interface Loaded<T> {
  data: Signal<T | null>;
  error: Signal<string | null>;
  reload(): Promise<void>;
}

/**
 * One GET, loaded when the view opens, again when its path changes and on demand. Only the latest
 * request's answer is shown: an earlier one answering late (a filter changed twice in quick
 * succession) would otherwise put its rows back.
 */
export function useLoad<T>(path: string): Loaded<T> {
  const data = useSignal<T | null>(null);
  const error = useSignal<string | null>(null);
  const latest = useRef(0);
  async function reload() {
    const request = ++latest.current;
    try {
      const answer = await api<T>(path);
      if (request !== latest.current) return;
      data.value = answer;
      error.value = null;
    } catch (e) {
      if (request !== latest.current) return;
      error.value = describe(e);
    }
  }
  useEffect(() => {
    void reload();
  }, [path]);
  return { data, error, reload };
}
