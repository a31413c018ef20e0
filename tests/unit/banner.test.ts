import { describe, expect, test } from "bun:test";
import { bindNotes, localUrl } from "../../src/server/banner.ts";

const addresses = ["192.0.2.2", "fd00::2"];

describe("the start-up lines about where ag listens agree with each other", () => {
  test("127.0.0.1: the listening URL says it all, no note", () => {
    expect(localUrl("127.0.0.1", 9100)).toBe("http://127.0.0.1:9100");
    expect(bindNotes({ host: "127.0.0.1", port: 9100, authenticated: false, addresses })).toEqual([]);
    expect(bindNotes({ host: "localhost", port: 9100, authenticated: false, addresses })).toEqual([]);
    expect(localUrl("::1", 9100)).toBe("http://[::1]:9100");
  });

  test("0.0.0.0 without a token: one warning naming all interfaces, this machine's addresses and the URL to use here", () => {
    expect(localUrl("0.0.0.0", 9100)).toBe("http://127.0.0.1:9100");
    const notes = bindNotes({ host: "0.0.0.0", port: 9100, authenticated: false, addresses });
    expect(notes).toEqual([
      {
        level: "warn",
        text:
          "!!! ag listens on all interfaces (0.0.0.0, port 9100) WITHOUT authentication: anyone who can " +
          "reach port 9100 of this machine (at 192.0.2.2) can run commands on it through the agents. " +
          "Browsers are held off (a request must name a loopback or configured host), other clients are " +
          "not. From this machine, or through a port forwarded to its localhost, use http://127.0.0.1:9100. " +
          "Set SVC_AUTH_TOKEN, or SVC_HOST=127.0.0.1 to listen on this machine only.",
      },
    ]);
    // Never a URL on 0.0.0.0: it is an address to bind, not one to connect to.
    expect(notes[0]!.text).not.toContain("http://0.0.0.0");
  });

  test("0.0.0.0 with a token: an info line with the URL here and the URLs from other machines", () => {
    expect(bindNotes({ host: "0.0.0.0", port: 9100, authenticated: true, addresses })).toEqual([
      {
        level: "info",
        text:
          "ag listens on all interfaces (0.0.0.0, port 9100): http://127.0.0.1:9100 from this machine; " +
          "from other machines http://192.0.2.2:9100, with the token",
      },
    ]);
  });

  test(":: takes IPv6 and IPv4 addresses; many addresses are counted, not listed", () => {
    const many = ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5", "fd00::2"];
    const [note] = bindNotes({ host: "::", port: 80, authenticated: true, addresses: many });
    expect(note!.text).toBe(
      "ag listens on all interfaces (::, port 80): http://127.0.0.1:80 from this machine; from other " +
        "machines http://10.0.0.1:80, http://10.0.0.2:80, http://10.0.0.3:80, http://10.0.0.4:80 (+2 more), with the token",
    );
    const [v6] = bindNotes({ host: "::", port: 80, authenticated: true, addresses: ["fd00::2"] });
    expect(v6!.text).toContain("http://[fd00::2]:80");
  });

  test("one address of this machine without a token: the warning names it; with one, nothing to add", () => {
    expect(localUrl("192.0.2.2", 9100)).toBe("http://192.0.2.2:9100");
    expect(bindNotes({ host: "192.0.2.2", port: 9100, authenticated: false, addresses })).toEqual([
      {
        level: "warn",
        text:
          "!!! ag listens on 192.0.2.2 (port 9100) WITHOUT authentication: anyone who can reach that address " +
          "can run commands on this machine through the agents. Set SVC_AUTH_TOKEN, or SVC_HOST=127.0.0.1 " +
          "to listen on this machine only.",
      },
    ]);
    expect(bindNotes({ host: "192.0.2.2", port: 9100, authenticated: true, addresses })).toEqual([]);
  });
});
