// Shapes from the M2 contract (server/datasets/schemas.ts owns them).
export type CaseFormat = 'text' | 'json';

export type DatasetCase = { id: string; position: number; input: string; expectedOutput: string; inputFormat: CaseFormat; referenceFormat: CaseFormat };

export type Dataset = { id: string; revision: number; count: number; capacity: number; rows: DatasetCase[] };

export type CaseRow = { input: string; expectedOutput: string; inputFormat?: CaseFormat; referenceFormat?: CaseFormat };

export type ImportMode = 'append' | 'replace';

export type RowError = { row: number; field: string; message: string };
export type SkippedRow = { row: number; reason: string };

export type ImportPreview = {
  wouldAdd: number;
  skippedRows: SkippedRow[];
  rowErrors: RowError[];
  currentCount: number;
  availableCapacity: number;
  requestedAddition: number;
  accepted: boolean;
};

export type ImportResult = { added: number; skipped: number; count: number; revision: number; skippedRows: SkippedRow[] };

export const formatOptions: { value: CaseFormat; label: string }[] = [
  { value: 'text', label: 'Text' },
  { value: 'json', label: 'JSON' },
];

// Quick evaluations use the first cases in dataset order.
export const quickEvaluationSize = 10;
