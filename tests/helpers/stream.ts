/**
 * Collects a running process's stream as it comes; `until` waits for some text (a hang guard,
 * not a measure).
 */
export function collect(stream: ReadableStream<Uint8Array>) {
  let text = "";
  const decoder = new TextDecoder();
  const done = (async () => {
    for await (const chunk of stream) text += decoder.decode(chunk, { stream: true });
  })();
  return {
    text: () => text,
    done,
    async until(needle: string, guardMs = 30_000) {
      const deadline = Date.now() + guardMs;
      while (!text.includes(needle)) {
        if (Date.now() > deadline) throw new Error(`never saw ${JSON.stringify(needle)} in:\n${text}`);
        await Bun.sleep(20);
      }
    },
  };
}

/** Whether a process with this pid exists (signal 0 checks without sending anything). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
