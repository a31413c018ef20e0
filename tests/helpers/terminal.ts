import { connect } from "node:net";

// biome-ignore lint/suspicious/noExplicitAny: server messages are inspected field by field
type Json = Record<string, any>;

/**
 * A client of the live terminal WebSocket (GET /v1/sessions/:id/terminal): every text message
 * parsed, every binary frame kept, and how it closed.
 */
export interface TerminalClient {
  socket: WebSocket;
  /** Every message in order: JSON objects for text frames, bytes for binary ones. */
  messages: Array<Json | Uint8Array>;
  texts(): Json[];
  /** The binary frames after the last snapshot, as UTF-8. */
  output(): string;
  send(message: unknown): void;
  /** Waits until a message (or the output) satisfies `check`. */
  until(check: (client: TerminalClient) => boolean, ms?: number): Promise<void>;
  closed: Promise<{ code: number; reason: string }>;
  close(): void;
}

export function openTerminal(url: string, headers: Record<string, string> = {}): Promise<TerminalClient> {
  const socket = new WebSocket(url, { headers } as never);
  socket.binaryType = "arraybuffer";
  const messages: Array<Json | Uint8Array> = [];
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    socket.addEventListener("close", (e) => resolve({ code: e.code, reason: e.reason }));
  });
  socket.addEventListener("message", (e) => {
    messages.push(typeof e.data === "string" ? JSON.parse(e.data) : new Uint8Array(e.data as ArrayBuffer));
  });
  const client: TerminalClient = {
    socket,
    messages,
    texts: () => messages.filter((m): m is Json => !(m instanceof Uint8Array)),
    output() {
      const last = messages.findLastIndex((m) => !(m instanceof Uint8Array) && m.type === "snapshot");
      const frames = messages.slice(last + 1).filter((m): m is Uint8Array => m instanceof Uint8Array);
      return Buffer.concat(frames).toString("utf8");
    },
    send: (message) => socket.send(typeof message === "string" ? message : JSON.stringify(message)),
    async until(check, ms = 5000) {
      const deadline = Date.now() + ms;
      while (!check(client)) {
        if (Date.now() > deadline) {
          throw new Error(
            `terminal condition not met; messages: ${JSON.stringify(client.texts()).slice(0, 2000)}`,
          );
        }
        await Bun.sleep(10);
      }
    },
    closed,
    close: () => socket.close(),
  };
  return new Promise((resolve, reject) => {
    socket.addEventListener("open", () => resolve(client));
    socket.addEventListener("error", () => reject(new Error(`WebSocket to ${url} failed`)));
  });
}

/**
 * A raw WebSocket handshake over TCP: what the server answers before (or instead of) upgrading —
 * its status and, for a refusal, its JSON body. A WebSocket client API shows neither.
 */
export function handshake(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Json | null; headers: string }> {
  const target = new URL(url);
  const lines = [
    `GET ${target.pathname}${target.search} HTTP/1.1`,
    `Host: ${target.host}`,
    "Upgrade: websocket",
    "Connection: Upgrade",
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
    "Sec-WebSocket-Version: 13",
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ];
  return new Promise((resolve, reject) => {
    const socket = connect(Number(target.port), target.hostname);
    let received = Buffer.alloc(0);
    socket.on("error", reject);
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf("\r\n\r\n");
      if (end === -1) return;
      const head = received.subarray(0, end).toString("latin1");
      const status = Number(head.split(" ")[1]);
      const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
      if (status !== 101 && received.length < end + 4 + length) return;
      const body = received.subarray(end + 4, end + 4 + length).toString("utf8");
      socket.destroy();
      resolve({ status, body: status === 101 || !body ? null : JSON.parse(body), headers: head });
    });
    socket.write(`${lines.join("\r\n")}\r\n\r\n`);
  });
}

/**
 * A WebSocket client over raw TCP that can stop reading (a slow or stalled browser tab): the
 * server's frames pile up in its send queue. Frames are parsed as they are read.
 */
export interface RawTerminal {
  frames: Array<{ text: true; message: Json } | { text: false; bytes: Buffer }>;
  pause(): void;
  resume(): void;
  close(): void;
}

export function openRawTerminal(url: string, headers: Record<string, string> = {}): Promise<RawTerminal> {
  const target = new URL(url);
  const request = [
    `GET ${target.pathname}${target.search} HTTP/1.1`,
    `Host: ${target.host}`,
    "Upgrade: websocket",
    "Connection: Upgrade",
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
    "Sec-WebSocket-Version: 13",
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ];
  return new Promise((resolve, reject) => {
    const socket = connect(Number(target.port), target.hostname);
    const frames: RawTerminal["frames"] = [];
    let buffer = Buffer.alloc(0);
    let upgraded = false;
    socket.on("error", reject);
    socket.on("data", (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      if (!upgraded) {
        const end = buffer.indexOf("\r\n\r\n");
        if (end === -1) return;
        if (!buffer.subarray(0, end).toString().startsWith("HTTP/1.1 101"))
          return reject(new Error("no upgrade"));
        upgraded = true;
        buffer = buffer.subarray(end + 4);
        resolve({
          frames,
          pause: () => socket.pause(),
          resume: () => socket.resume(),
          close: () => socket.destroy(),
        });
      }
      // Server frames are unmasked: opcode, 7/16/64-bit length, payload.
      for (;;) {
        if (buffer.length < 2) return;
        const opcode = buffer[0]! & 0x0f;
        let length = buffer[1]! & 0x7f;
        let at = 2;
        if (length === 126) {
          if (buffer.length < 4) return;
          length = buffer.readUInt16BE(2);
          at = 4;
        } else if (length === 127) {
          if (buffer.length < 10) return;
          length = Number(buffer.readBigUInt64BE(2));
          at = 10;
        }
        if (buffer.length < at + length) return;
        const payload = buffer.subarray(at, at + length);
        if (opcode === 1) frames.push({ text: true, message: JSON.parse(payload.toString("utf8")) });
        else if (opcode === 2) frames.push({ text: false, bytes: Buffer.from(payload) });
        buffer = buffer.subarray(at + length);
      }
    });
    socket.write(`${request.join("\r\n")}\r\n\r\n`);
  });
}
