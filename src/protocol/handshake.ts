import { type Static, Type } from "@sinclair/typebox";
import { SERVER_CAPABILITIES } from "./capabilities.ts";

/**
 * The capability handshake (SPEC "Orchestration and protocol", CONTRACT §6), pure.
 * A protocol version is `major` or `major.minor`, numbers compared in that order ("1" = "1.0").
 */
export const PROTOCOL_VERSION = "1";
export const MIN_PROTOCOL_VERSION = "1";

export const ProtocolVersion = Type.String({
  pattern: "^[0-9]{1,9}(\\.[0-9]{1,9})?$",
  description: 'major or major.minor, e.g. "1" or "1.2"',
});

// Extra fields are allowed on purpose: a newer client may send more than this server knows.
export const HandshakeRequest = Type.Object(
  {
    protocolVersion: ProtocolVersion,
    clientCapabilities: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { maxItems: 256, default: [] }),
    ),
  },
  // A newer client may send fields this server does not know yet: they are ignored, not refused.
  { additionalProperties: true },
);
export type HandshakeRequest = Static<typeof HandshakeRequest>;

export const HandshakeResponse = Type.Object({
  protocolVersion: Type.String({ description: "the server's current protocol version" }),
  serverCapabilities: Type.Array(Type.String()),
  negotiatedCapabilities: Type.Array(Type.String(), {
    description: "client ∩ server, in the server's order",
  }),
  warnings: Type.Array(Type.String(), { description: "unknown capabilities and version skew" }),
  compatible: Type.Boolean(),
});
export type HandshakeResponse = Static<typeof HandshakeResponse>;

export interface ServerProtocol {
  version: string;
  minimum: string;
  capabilities: readonly string[];
}

export const SERVER_PROTOCOL: ServerProtocol = {
  version: PROTOCOL_VERSION,
  minimum: MIN_PROTOCOL_VERSION,
  capabilities: SERVER_CAPABILITIES,
};

export interface Negotiation {
  response: HandshakeResponse;
  /** Why the client is refused (its version is below the minimum); null when compatible. */
  refusal: string | null;
}

/** `request.protocolVersion` must already match ProtocolVersion (the route validates it). */
export function negotiate(request: HandshakeRequest, server: ServerProtocol = SERVER_PROTOCOL): Negotiation {
  const offered = new Set(server.capabilities);
  const asked = new Set(request.clientCapabilities ?? []);
  const warnings = [...asked]
    .filter((name) => !offered.has(name))
    .map((name) => `unknown capability "${name}"`);
  const client = request.protocolVersion;
  let refusal: string | null = null;
  if (compareVersions(client, server.minimum) < 0) {
    refusal = `protocol version ${client} is below the server minimum ${server.minimum}; upgrade the client`;
    warnings.unshift(refusal);
  } else if (compareVersions(client, server.version) > 0) {
    warnings.unshift(
      `version skew: client protocol ${client} is newer than the server's ${server.version}; features added after ${server.version} are unavailable`,
    );
  }
  return {
    response: {
      protocolVersion: server.version,
      serverCapabilities: [...server.capabilities],
      negotiatedCapabilities: server.capabilities.filter((name) => asked.has(name)),
      warnings,
      compatible: refusal === null,
    },
    refusal,
  };
}

/** Negative, zero or positive as a is older than, the same as, or newer than b. */
export function compareVersions(a: string, b: string): number {
  const [aMajor = 0, aMinor = 0] = a.split(".").map(Number);
  const [bMajor = 0, bMinor = 0] = b.split(".").map(Number);
  return aMajor - bMajor || aMinor - bMinor;
}
