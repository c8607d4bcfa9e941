/** What the log keeps of one guardrail run: never the text it saw or masked. */
export interface GuardrailRecord {
  id: string;
  phase: 'pre' | 'post';
  verdict: 'allow' | 'mask' | 'block' | 'error';
  /** entity types or rule names found, e.g. ["EMAIL"] */
  findings?: string[];
  /** true when mode is audit and the verdict was recorded but not applied */
  audited?: boolean;
}
