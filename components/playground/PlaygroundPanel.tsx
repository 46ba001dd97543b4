'use client';

import { useState, type FormEvent } from 'react';
import { Alert } from '@/components/ui/Alert';
import { Button } from '@/components/ui/Button';
import { Card, CardBody, CardHeader } from '@/components/ui/Card';
import { Field, Input } from '@/components/ui/Field';
import type { PromptScope } from '@/components/prompts/PromptShell';
import type { DraftContent } from '@/components/prompts/types';
import { formatFinishReason, formatLatency, formatUsdFromNanos } from './format';
import { usePlaygroundRun } from './usePlaygroundRun';
import './playground.css';

// Runs the editor's current content (saved or not) once against its model route, streaming the output.
export function PlaygroundPanel({
  scope,
  content,
  variables,
  blocked,
}: {
  scope: PromptScope;
  content: DraftContent;
  variables: string[];
  blocked: boolean;
}) {
  const { state, run, stop } = usePlaygroundRun();
  const [message, setMessage] = useState('');
  const [values, setValues] = useState<Record<string, string>>({});
  // Own values only: a variable named `constructor` must not show Object.prototype's.
  const valueOf = (name: string) => (Object.hasOwn(values, name) ? values[name] : '');
  const running = state.phase === 'running';
  const usesVariables = content.inputType === 'variables';

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    if (running || blocked || content.messages.length === 0) return;
    const base = { organizationId: scope.organizationId, promptId: scope.promptId, content };
    if (usesVariables)
      void run({ ...base, variables: Object.fromEntries(variables.map((name) => [name, valueOf(name)])) });
    else void run({ ...base, input: message });
  }

  return (
    <Card className="playground">
      <CardHeader title="Playground" description="Try the draft as it is in the editor, before saving a version." />
      <CardBody>
        {!scope.isWriter ? (
          <Alert tone="info">Editors and admins can run the playground.</Alert>
        ) : (
          <form
            className="stack"
            onSubmit={onSubmit}
            noValidate
            aria-label="Playground"
            // Ctrl/⌘ + Enter runs from any field: the message, a variable's value, or the Run button.
            onKeyDown={(e) => {
              if (e.key === 'Enter' && (e.metaKey || e.ctrlKey)) onSubmit(e);
            }}
          >
            {usesVariables ? (
              variables.length === 0 ? (
                <p className="muted">This prompt has no variables: it runs as written.</p>
              ) : (
                variables.map((name) => (
                  <Field key={name} label={<span className="mono">{`{{${name}}}`}</span>}>
                    <Input
                      aria-label={`Value of ${name}`}
                      value={valueOf(name)}
                      onChange={(e) => setValues((current) => ({ ...current, [name]: e.target.value }))}
                    />
                  </Field>
                ))
              )
            ) : (
              <Field label="User message" id="playground-input">
                <textarea
                  id="playground-input"
                  className="textarea"
                  rows={3}
                  value={message}
                  placeholder="What the user says…"
                  onChange={(e) => setMessage(e.target.value)}
                />
              </Field>
            )}
            <div className="inline">
              <Button
                type="submit"
                variant="primary"
                loading={running}
                disabled={running || blocked || content.messages.length === 0}
              >
                {running ? 'Running…' : 'Run'}
              </Button>
              {running ? (
                <Button onClick={stop} variant="danger-outline">
                  Stop
                </Button>
              ) : null}
              <span className="subtle playground-kbd">Ctrl + Enter</span>
            </div>
            {blocked ? <p className="field-hint">Fix the highlighted fields in the editor to run.</p> : null}
            {!blocked && content.messages.length === 0 ? (
              <p className="field-hint">Add a message in the editor to run.</p>
            ) : null}
          </form>
        )}
        {state.phase !== 'idle' ? (
          <div className="playground-result">
            <div className="field-label">Output</div>
            <pre
              className="playground-output"
              aria-label="Playground output"
              aria-busy={running || undefined}
              data-phase={state.phase}
            >
              {state.output}
              {running ? <span className="stream-caret" aria-hidden="true" /> : null}
              {!running && state.output === '' ? <span className="subtle">(no output)</span> : null}
            </pre>
            {state.phase === 'done' ? (
              <p className="run-stats" role="status" aria-label="Run statistics">
                <span>
                  <strong>{state.result.inputTokens}</strong> tokens in
                </span>
                <span>
                  <strong>{state.result.outputTokens}</strong> tokens out
                </span>
                <span>{formatLatency(state.result.latencyMs)}</span>
                <span>{formatUsdFromNanos(state.result.costUsdNanos)}</span>
                <span className="run-finish" data-reason={state.result.finishReason}>
                  {formatFinishReason(state.result.finishReason)}
                </span>
              </p>
            ) : null}
            {state.phase === 'stopped' ? (
              <p className="run-stats" role="status">
                Stopped before the model finished.
              </p>
            ) : null}
            {state.phase === 'failed' ? (
              <Alert tone="error" title={state.code === 'unavailable' ? 'The model is unavailable' : 'The run failed'}>
                {state.message}
              </Alert>
            ) : null}
          </div>
        ) : null}
      </CardBody>
    </Card>
  );
}
