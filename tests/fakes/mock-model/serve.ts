import { parseArgs } from "node:util";
import { FACES, startMockModel } from "./server.ts";

/**
 * The mock model on its own, to try an agent CLI offline by hand:
 *   bun tests/fakes/mock-model/serve.ts [--port 0] [--scenario file.json]
 * prints its URL and the faces it speaks; docs/agents.md says how to point each agent at it.
 */
const { values } = parseArgs({
  options: { port: { type: "string", default: "0" }, scenario: { type: "string" } },
});
const mock = startMockModel({
  port: Number(values.port),
  ...(values.scenario ? { scenario: values.scenario } : {}),
});
console.log(mock.url);
console.error(`mock model: ${FACES.map((f) => f.name).join(", ")}; requests at ${mock.url}/_mock/requests`);
process.on("SIGINT", () => void mock.stop().then(() => process.exit(0)));
process.on("SIGTERM", () => void mock.stop().then(() => process.exit(0)));
