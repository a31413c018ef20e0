export { createSourceIndexer, searchRole, type TranscriptFile, toTurn } from "./indexer.ts";
export { toMatchExpression } from "./query.ts";
export { REDACTED, redact, secretRanges } from "./redact.ts";
export * from "./search.ts";
export { createSearchService, externalId, type Searcher, type SearchService } from "./service.ts";
export { snippetOf } from "./snippet.ts";
export { createSearchStore, type SearchStore } from "./store.ts";
