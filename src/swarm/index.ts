export { listProcesses, type SystemProcess } from "./processes.ts";
export { createSwarmService, type SwarmService } from "./service.ts";
export { agentProcesses, Swarm, sessionTree } from "./swarm.ts";
