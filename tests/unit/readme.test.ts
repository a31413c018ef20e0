import { expect, test } from "bun:test";
import { join } from "node:path";
import { SETTINGS } from "../../src/config/index.ts";

test("the README's configuration table names every setting and its variable", async () => {
  const readme = await Bun.file(join(import.meta.dir, "..", "..", "README.md")).text();
  for (const setting of SETTINGS) {
    expect(readme).toContain(`\`${setting.key}\``);
    if ("env" in setting) expect(readme).toContain(`\`${setting.env}\``);
  }
  expect(readme).toContain("npm ci && npm start");
  expect(readme).toContain("npm ci && npm test");
});
