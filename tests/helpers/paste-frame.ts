/**
 * A prompt as the model received it, with Claude Code's own paste frame taken off: 2.1.328 and
 * later hand a paste they collapsed into "[Pasted text #N +L lines]" to the model as
 * `<pasted_content id="N">\n<text>\n</pasted_content id="N">` (docs/agents.md, "Prompts that
 * arrive framed"). Exactly one frame around the whole prompt, or none; anything else is returned
 * as it is, so a comparison with the sent text fails.
 */
export function unframedPrompt(received: string): string {
  const framed = received.match(/^<pasted_content id="([^"\n]+)">\n([\s\S]*)\n<\/pasted_content id="\1">$/);
  return framed ? framed[2]! : received;
}
