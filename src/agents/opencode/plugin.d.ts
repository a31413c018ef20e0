/**
 * plugin.js is imported as text (`with { type: "text" }`): its source, which the launch writes
 * into each session's config dir for OpenCode to load. Tests load the file itself as a module.
 */
declare const source: string;
export default source;
