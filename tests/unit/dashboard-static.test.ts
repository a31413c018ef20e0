import { beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { buildDashboard } from "../../scripts/dashboard.ts";
import { chooseEncoding } from "../../src/server/static.ts";
import { type TestApp, testApp } from "../helpers/app.ts";
import { tempDir } from "../helpers/temp.ts";

/**
 * The dashboard as the build writes it and the server sends it: every file but the page named by
 * its content and kept for good, the page revalidated by its ETag, each sent precompressed (br
 * over gzip) when the request allows. The compiled binary serves the same files
 * (tests/e2e/binary.test.ts).
 */
let out: string;
let app: TestApp;
let script: string;
beforeAll(async () => {
  out = await buildDashboard(tempDir("ag-dash-static-"));
  app = testApp({ dashboardRoot: out });
  script = readFileSync(join(out, "index.html"), "utf8").match(/src="(app-[0-9a-z]{8}\.js)"/)![1]!;
}, 60_000);

const get = (path: string, headers: Record<string, string> = {}) =>
  app.request("GET", path, { headers, token: false });

describe("the built dashboard", () => {
  test("names its script and styles by their content; the page names them", () => {
    const html = readFileSync(join(out, "index.html"), "utf8");
    expect(html).toMatch(/href="app-[0-9a-z]{8}\.css"/);
    expect(html).toMatch(/href="style-[0-9a-f]{8}\.css"/);
    expect(html).not.toMatch(/"(app\.js|app\.css|style\.css)"/);
  });

  test("a hashed file is sent brotli-compressed, kept for a year and immutable", async () => {
    const response = await get(`/dashboard/${script}`, { "accept-encoding": "gzip, deflate, br" });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-encoding")).toBe("br");
    expect(response.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(response.headers.get("vary")).toBe("accept-encoding");
    expect(response.headers.get("content-type")).toContain("javascript");
    expect(response.headers.get("content-security-policy")).toContain("default-src 'self'");
    const body = new Uint8Array(await response.arrayBuffer());
    const original = readFileSync(join(out, script));
    expect(body.length).toBeLessThan(original.length / 3);
    expect(Buffer.from(brotliDecompressSync(body)).equals(original)).toBe(true);
  });

  test("gzip when brotli is not accepted, the file as it is when neither is", async () => {
    const gz = await get(`/dashboard/${script}`, { "accept-encoding": "gzip, br;q=0" });
    expect(gz.headers.get("content-encoding")).toBe("gzip");
    expect(gunzipSync(new Uint8Array(await gz.arrayBuffer())).equals(readFileSync(join(out, script)))).toBe(
      true,
    );
    const plain = await get(`/dashboard/${script}`);
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(Buffer.from(await plain.arrayBuffer()).equals(readFileSync(join(out, script)))).toBe(true);
  });

  test("the page is revalidated by its ETag: a 304 with no body while it has not changed", async () => {
    const first = await get("/dashboard/", { "accept-encoding": "br" });
    expect(first.status).toBe(200);
    expect(first.headers.get("cache-control")).toBe("no-cache");
    expect(first.headers.get("content-encoding")).toBe("br");
    const etag = first.headers.get("etag")!;
    expect(etag).toMatch(/^"[\w-]+-br"$/);
    const again = await get("/dashboard/", { "accept-encoding": "br", "if-none-match": etag });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    expect(again.headers.get("etag")).toBe(etag);
    expect(again.headers.get("content-security-policy")).toContain("default-src 'self'");
    // Another representation has another tag: a gzip copy's tag does not validate the brotli one.
    const other = await get("/dashboard/", { "accept-encoding": "gzip", "if-none-match": etag });
    expect(other.status).toBe(200);
    expect(other.headers.get("etag")).not.toBe(etag);
  });

  test("the precompressed copies are not files of their own; a missing file is the 404 envelope", async () => {
    for (const path of [`/dashboard/${script}.br`, "/dashboard/index.html.gz", "/dashboard/app.js"]) {
      const response = await get(path);
      expect(response.status).toBe(404);
      expect((await response.json()).code).toBe("NOT_FOUND");
    }
  });
});

test("Accept-Encoding: the best accepted encoding the build wrote a copy of", () => {
  const file = join(out, "index.html");
  expect(chooseEncoding("gzip, deflate, br, zstd", file)).toBe("br");
  expect(chooseEncoding("gzip;q=1.0, br;q=0", file)).toBe("gzip");
  expect(chooseEncoding("*", file)).toBe("br");
  expect(chooseEncoding("*;q=0, gzip", file)).toBe("gzip");
  expect(chooseEncoding("identity", file)).toBeNull();
  expect(chooseEncoding(null, file)).toBeNull();
  expect(chooseEncoding("br", join(out, "no-such-file"))).toBeNull();
});
