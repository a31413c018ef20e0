#!/usr/bin/env bun
/**
 * What an agent starts to show its work: `bun tests/fakes/dev-server.ts` serves, on 127.0.0.1 and
 * a port of the kernel's choosing, a blue page with a 300x200 red box at `/` and a 302 to its
 * `?to=` at `/away`; it prints "<pid> <port>" on its first line.
 */
const page = `<!doctype html><html><body style="margin:0;background:#0000ff"><div style="width:300px;height:200px;background:#ff0000"></div></body></html>`;
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === "/away") return Response.redirect(url.searchParams.get("to") ?? "/", 302);
    return new Response(page, { headers: { "content-type": "text/html" } });
  },
});
console.log(process.pid, server.port);
