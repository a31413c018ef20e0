export * from "./ring.ts";
