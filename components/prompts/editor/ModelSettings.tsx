'use client';

import { useQuery } from '@tanstack/react-query';
import { Field, Input, Select } from '@/components/ui/Field';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError } from '@/lib/trpc/errors';
import type { DraftContent, ModelRoute } from '../types';

const judgeOnlyRouteId = 'local/judge';

type Props = {
  organizationId: string;
  content: DraftContent;
  readOnly: boolean;
  issues: Record<string, string>;
  onChange: (patch: Partial<DraftContent>) => void;
};

export function ModelSettings({ organizationId, content, readOnly, issues, onChange }: Props) {
  const trpc = useTRPC();
  const models = useQuery(trpc.models.list.queryOptions({ organizationId }));
  // The built-in judge only grades evaluation outputs (server/models/local-judge.ts), so it is not
  // offered as a prompt's model; a draft that already names it still shows it.
  const routes: ModelRoute[] = (models.data?.items ?? []).filter(
    (route) => route.id !== judgeOnlyRouteId || route.id === content.modelRouteId,
  );
  const selected = routes.find((route) => route.id === content.modelRouteId);
  const unavailable = routes.filter((route) => !route.available);

  return (
    <div className="settings-grid">
      <Field
        label="Model"
        error={
          issues['content.modelRouteId'] ??
          (models.isError ? readAppError(models.error)?.message : null) ??
          (selected && !selected.available
            ? 'This route is unavailable: runs will fail until its provider is configured.'
            : null)
        }
        hint={
          unavailable.length > 0
            ? `${unavailable.length} ${unavailable.length === 1 ? 'route is' : 'routes are'} unavailable (no provider configured) and cannot be chosen.`
            : selected
              ? `${selected.provider} · ${selected.modelId}`
              : undefined
        }
      >
        <Select
          value={content.modelRouteId}
          disabled={readOnly || models.isPending}
          onChange={(e) => {
            const route = routes.find((item) => item.id === e.target.value);
            if (route) onChange({ modelRouteId: route.id, modelId: route.modelId });
          }}
        >
          {models.isPending ? <option value={content.modelRouteId}>Loading models…</option> : null}
          {!models.isPending && !selected ? (
            <option value={content.modelRouteId}>{content.modelRouteId || 'Choose a model'}</option>
          ) : null}
          {routes.map((route) => (
            <option key={route.id} value={route.id} disabled={!route.available}>
              {route.name}
              {route.available ? '' : ' — unavailable'}
            </option>
          ))}
        </Select>
      </Field>
      <Field
        label="Temperature"
        error={issues['content.temperature']}
        hint="Lower is more deterministic; higher is more varied."
      >
        <div className="temperature">
          <input
            type="range"
            min={0}
            max={2}
            step={0.1}
            value={Number.isFinite(content.temperature) ? content.temperature : 1}
            disabled={readOnly}
            aria-label="Temperature slider"
            onChange={(e) => onChange({ temperature: Number(e.target.value) })}
          />
          <Input
            type="number"
            min={0}
            max={2}
            step={0.1}
            className="temperature-number"
            value={Number.isFinite(content.temperature) ? content.temperature : ''}
            readOnly={readOnly}
            onChange={(e) => onChange({ temperature: e.target.value === '' ? Number.NaN : Number(e.target.value) })}
          />
        </div>
      </Field>
      <Field
        label="Max output tokens"
        error={issues['content.maxOutputTokens']}
        hint="The most tokens the model may answer with. Leave empty for the model’s default."
      >
        <Input
          type="number"
          min={1}
          max={1_000_000}
          step={1}
          inputMode="numeric"
          placeholder="Model default"
          className="max-tokens-number"
          value={
            content.maxOutputTokens === null || !Number.isFinite(content.maxOutputTokens) ? '' : content.maxOutputTokens
          }
          readOnly={readOnly}
          onChange={(e) => onChange({ maxOutputTokens: e.target.value === '' ? null : Number(e.target.value) })}
        />
      </Field>
    </div>
  );
}
