/** The fleet domain's public face (docs/fleet.md). */
export { createFleet, type Fleet, type FleetHealth, type FleetSettings } from "./fleet.ts";
export { type Interceptor, outsideFleet, type RouteCall } from "./intercept.ts";
export { createFleetShared, type FleetShared } from "./shared.ts";
export { FleetView } from "./view.ts";
