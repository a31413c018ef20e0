export { type Capability, SERVER_CAPABILITIES } from "./capabilities.ts";
export {
  compareVersions,
  HandshakeRequest,
  HandshakeResponse,
  MIN_PROTOCOL_VERSION,
  type Negotiation,
  negotiate,
  PROTOCOL_VERSION,
  ProtocolVersion,
  SERVER_PROTOCOL,
  type ServerProtocol,
} from "./handshake.ts";
