// Contract shapes are owned by server/datasets/schemas.ts; the dashboard re-exports them (types only).
import type { caseFormats } from '@/server/datasets/schemas';

export type {
  CaseRow,
  Dataset,
  DatasetCase,
  ImportMode,
  ImportPreview,
  ImportResult,
  RowError,
} from '@/server/datasets/schemas';

export type CaseFormat = (typeof caseFormats)[number];

export const formatOptions: { value: CaseFormat; label: string }[] = [
  { value: 'text', label: 'Text' },
  { value: 'json', label: 'JSON' },
];

// Quick evaluations use the first cases in dataset order.
export const quickEvaluationSize = 10;
