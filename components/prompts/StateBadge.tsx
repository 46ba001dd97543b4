import { Badge, type BadgeTone } from '@/components/ui/Badge';
import type { PromptState } from './types';

const tone: Record<PromptState, BadgeTone> = { setup: 'warning', active: 'success', archived: 'neutral' };
const label: Record<PromptState, string> = { setup: 'Setup', active: 'Active', archived: 'Archived' };

export const promptStateOptions: { value: PromptState; label: string }[] = [
  { value: 'setup', label: label.setup },
  { value: 'active', label: label.active },
  { value: 'archived', label: label.archived },
];

export function PromptStateBadge({ state }: { state: PromptState }) {
  return <Badge tone={tone[state]}>{label[state]}</Badge>;
}
