import { describe, expect, test } from "bun:test";
import { bindNotes, localUrl } from "../../src/server/banner.ts";

const addresses = ["192.0.2.2", "fd00::2"];
/** The modes of src/server/access.ts: a configured token, ag's own beyond loopback, the local tool. */
const CONFIGURED = { mode: "token", tokenFile: null } as const;
const GENERATED = { mode: "token", tokenFile: "/home/u/.svc/auth-token" } as const;
const LOCAL = { mode: "local", tokenFile: "/home/u/.svc/auth-token" } as const;

describe("the start-up lines about where ag listens agree with each other", () => {
  test("127.0.0.1: the listening URL says it all, no note", () => {
    expect(localUrl("127.0.0.1", 9100)).toBe("http://127.0.0.1:9100");
    expect(bindNotes({ host: "127.0.0.1", port: 9100, access: LOCAL, addresses })).toEqual([]);
    expect(bindNotes({ host: "localhost", port: 9100, access: LOCAL, addresses })).toEqual([]);
    expect(localUrl("::1", 9100)).toBe("http://[::1]:9100");
  });

  test("0.0.0.0 served without a token (allowUnauthenticatedNetwork): one warning naming the setting, all interfaces, this machine's addresses and the URL to use here", () => {
    expect(localUrl("0.0.0.0", 9100)).toBe("http://127.0.0.1:9100");
    const notes = bindNotes({ host: "0.0.0.0", port: 9100, access: LOCAL, addresses });
    expect(notes).toEqual([
      {
        level: "warn",
        text:
          "!!! ag listens on all interfaces (0.0.0.0, port 9100) WITHOUT authentication " +
          "(SVC_ALLOW_UNAUTHENTICATED_NETWORK / allowUnauthenticatedNetwork is on): anyone who can " +
          "reach port 9100 of this machine (at 192.0.2.2) can run commands on it through the agents. " +
          "Browsers are held off (a request must name a loopback or configured host), other clients only " +
          "from requests that change state without an Origin. From this machine, or through a port " +
          "forwarded to its localhost, use http://127.0.0.1:9100. Turn SVC_ALLOW_UNAUTHENTICATED_NETWORK / " +
          "allowUnauthenticatedNetwork off to require ag's token, set SVC_AUTH_TOKEN, or SVC_HOST=127.0.0.1 " +
          "to listen on this machine only.",
      },
    ]);
    // Never a URL on 0.0.0.0: it is an address to bind, not one to connect to.
    expect(notes[0]!.text).not.toContain("http://0.0.0.0");
  });

  test("0.0.0.0 with a token: an info line with the URL here and the URLs from other machines", () => {
    expect(bindNotes({ host: "0.0.0.0", port: 9100, access: CONFIGURED, addresses })).toEqual([
      {
        level: "info",
        text:
          "ag listens on all interfaces (0.0.0.0, port 9100): http://127.0.0.1:9100 from this machine; " +
          "from other machines http://192.0.2.2:9100, with the token",
      },
    ]);
  });

  test("0.0.0.0 with ag's generated token: the same line names the token's file, never the token", () => {
    const [note] = bindNotes({ host: "0.0.0.0", port: 9100, access: GENERATED, addresses });
    expect(note).toEqual({
      level: "info",
      text:
        "ag listens on all interfaces (0.0.0.0, port 9100): http://127.0.0.1:9100 from this machine; " +
        "from other machines http://192.0.2.2:9100, with the token; no token is configured, so every " +
        "request needs the token ag generated in /home/u/.svc/auth-token (mode 0600; the ag CLI on this " +
        "machine reads it there; SVC_AUTH_TOKEN sets your own)",
    });
  });

  test(":: takes IPv6 and IPv4 addresses; many addresses are counted, not listed", () => {
    const many = ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5", "fd00::2"];
    const [note] = bindNotes({ host: "::", port: 80, access: CONFIGURED, addresses: many });
    expect(note!.text).toBe(
      "ag listens on all interfaces (::, port 80): http://127.0.0.1:80 from this machine; from other " +
        "machines http://10.0.0.1:80, http://10.0.0.2:80, http://10.0.0.3:80, http://10.0.0.4:80 (+2 more), with the token",
    );
    const [v6] = bindNotes({ host: "::", port: 80, access: CONFIGURED, addresses: ["fd00::2"] });
    expect(v6!.text).toContain("http://[fd00::2]:80");
  });

  test("one address of this machine: served without a token, the warning names it; with ag's token, where it is; with a configured one, nothing to add", () => {
    expect(localUrl("192.0.2.2", 9100)).toBe("http://192.0.2.2:9100");
    expect(bindNotes({ host: "192.0.2.2", port: 9100, access: LOCAL, addresses })).toEqual([
      {
        level: "warn",
        text:
          "!!! ag listens on 192.0.2.2 (port 9100) WITHOUT authentication (SVC_ALLOW_UNAUTHENTICATED_NETWORK / " +
          "allowUnauthenticatedNetwork is on): anyone who can reach that address can run commands on this " +
          "machine through the agents. Turn SVC_ALLOW_UNAUTHENTICATED_NETWORK / allowUnauthenticatedNetwork " +
          "off to require ag's token, set SVC_AUTH_TOKEN, or SVC_HOST=127.0.0.1 to listen on this machine only.",
      },
    ]);
    const [generated] = bindNotes({ host: "192.0.2.2", port: 9100, access: GENERATED, addresses });
    expect(generated!.level).toBe("info");
    expect(generated!.text).toStartWith("ag listens on 192.0.2.2 (port 9100): no token is configured");
    expect(generated!.text).toContain("/home/u/.svc/auth-token");
    expect(bindNotes({ host: "192.0.2.2", port: 9100, access: CONFIGURED, addresses })).toEqual([]);
  });
});
