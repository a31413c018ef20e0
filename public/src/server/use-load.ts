import { type Signal, useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { api, describe } from "../api.ts";

export interface Loaded<T> {
  data: Signal<T | null>;
  error: Signal<string | null>;
  reload(): Promise<void>;
}

/** One GET, loaded when the view opens and again on demand. */
export function useLoad<T>(path: string): Loaded<T> {
  const data = useSignal<T | null>(null);
  const error = useSignal<string | null>(null);
  async function reload() {
    try {
      data.value = await api<T>(path);
      error.value = null;
    } catch (e) {
      error.value = describe(e);
    }
  }
  useEffect(() => {
    void reload();
  }, [path]);
  return { data, error, reload };
}
