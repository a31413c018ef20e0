import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { HandshakeRequest, HandshakeResponse, negotiate, SERVER_PROTOCOL } from "../../protocol/index.ts";
import { ErrorBody, envelope } from "../errors.ts";

/**
 * A refused handshake is still a handshake answer (SPEC: 409 with `compatible` false) and still an
 * error (CONTRACT §3): one body carries the envelope and the handshake fields together.
 */
const HandshakeRefusal = Type.Composite([ErrorBody, HandshakeResponse]);

export function handshakeRoutes(server = SERVER_PROTOCOL) {
  return new Elysia({ name: "routes/handshake" }).post(
    "/v1/handshake",
    ({ body, set }) => {
      const { response, refusal } = negotiate(body, server);
      if (refusal === null) return response;
      set.status = 409;
      return { ...envelope("PROTOCOL_VERSION_UNSUPPORTED", refusal), ...response };
    },
    {
      body: HandshakeRequest,
      response: { 200: HandshakeResponse, 409: HandshakeRefusal },
      detail: {
        summary:
          "Negotiate protocol version and capabilities; 409 PROTOCOL_VERSION_UNSUPPORTED (with the handshake fields) below the minimum",
        tags: ["protocol"],
      },
    },
  );
}
