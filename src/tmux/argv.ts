/**
 * Pure argv building. Every tmux command ag runs goes to its private server (`-L <socket>`),
 * never to the user's default one.
 */
export function tmuxArgv(binary: string, socket: string, ...command: string[]): string[] {
  return [binary, "-L", socket, ...command];
}
