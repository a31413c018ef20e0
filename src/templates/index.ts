export { createTemplateService, type TemplateService } from "./service.ts";
export * from "./template.ts";
