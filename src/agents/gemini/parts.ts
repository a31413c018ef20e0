import { isObject, str } from "../json-fields.ts";

/** The parts of a Gemini content (text, thought, functionCall, functionResponse), read. */

export interface ToolResult {
  id: string;
  name: string;
  text: string;
  isError: boolean;
}

/** The text parts of a content (a string is its own text), thoughts left out. */
export function partsText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((p) => isObject(p) && typeof p.text === "string" && p.thought !== true)
    .map((p) => p.text as string)
    .join("\n");
}

/** The tool results a user content carries (functionResponse parts). */
export function resultsOf(content: unknown): ToolResult[] {
  if (!Array.isArray(content)) return [];
  return content.flatMap((part): ToolResult[] => {
    const response = isObject(part) && isObject(part.functionResponse) ? part.functionResponse : null;
    if (!response) return [];
    const body = isObject(response.response) ? response.response : {};
    const error = body.error;
    const value = error ?? body.output ?? body;
    const text = typeof value === "string" ? value : JSON.stringify(value);
    return [
      { id: str(response.id) ?? "", name: str(response.name) ?? "", text, isError: error !== undefined },
    ];
  });
}
