'use client';

import { useState } from 'react';
import { Button } from '@/components/ui/Button';
import { Field, Input } from '@/components/ui/Field';
import { FieldError } from '@/components/ui/FieldError';
import { PlusIcon, TrashIcon } from '@/components/ui/icons';
import { toolLimits } from '@/lib/tools';
import type { DraftContent } from '../types';
import { defaultParameters, parametersText, parseParameters } from './useToolParameterTexts';

type Tool = DraftContent['tools'][number];

// The function tools of a draft: name, description and a JSON Schema of the arguments each. A
// parameters text that does not parse stays in the editor (with its error) and is not saved.
export function ToolsEditor({
  tools,
  texts,
  readOnly,
  issues,
  onChange,
}: {
  tools: Tool[];
  texts: string[];
  readOnly: boolean;
  issues: Record<string, string>;
  onChange: (tools: Tool[], texts: string[]) => void;
}) {
  // The tool just added: its (empty, so invalid) fields say nothing until the person has typed in
  // them or left the tool, and focus goes to its name as "Add system message" does for messages.
  const [untouched, setUntouched] = useState<number | null>(null);
  const update = (index: number, patch: Partial<Tool>, text = texts[index]) => {
    if (index === untouched) setUntouched(null);
    onChange(
      tools.map((tool, i) => (i === index ? { ...tool, ...patch } : tool)),
      texts.map((t, i) => (i === index ? text : t)),
    );
  };
  const editParameters = (index: number, text: string) => {
    const parsed = parseParameters(text);
    // An unparsable text keeps the last good parameters in the draft; its error blocks saving.
    update(index, 'value' in parsed ? { parameters: parsed.value } : {}, text);
  };
  const remove = (index: number) => {
    setUntouched(null);
    onChange(
      tools.filter((_, i) => i !== index),
      texts.filter((_, i) => i !== index),
    );
  };
  const add = () => {
    const index = tools.length;
    onChange(
      [...tools, { type: 'function', name: '', description: '', parameters: defaultParameters }],
      [...texts, parametersText(defaultParameters)],
    );
    setUntouched(index);
    requestAnimationFrame(() => document.getElementById(`tool-${index}-name`)?.focus());
  };

  return (
    <div className="stack-sm">
      {issues['content.tools'] ? <FieldError id="tools-error" message={issues['content.tools']} /> : null}
      {tools.length === 0 ? (
        <p className="message-empty muted">
          {readOnly
            ? 'This draft offers the model no tools.'
            : 'No tools. Add a function the model may call; when it calls one, the call is the output.'}
        </p>
      ) : null}
      {tools.length > 0 ? (
        <ol className="tool-list" aria-label="Tools">
          {tools.map((tool, index) => {
            const issue = (field: string) =>
              index === untouched
                ? undefined
                : (issues[`content.tools.${index}.${field}`] ??
                  (field === 'name' ? issues[`content.tools.${index}`] : undefined));
            const text = texts[index] ?? parametersText(tool.parameters);
            return (
              <li
                key={index}
                className="tool"
                aria-label={`Tool ${index + 1}${tool.name ? `: ${tool.name}` : ''}`}
                onBlur={(e) => {
                  if (index === untouched && !e.currentTarget.contains(e.relatedTarget)) setUntouched(null);
                }}
              >
                <div className="tool-head">
                  <strong>Tool {index + 1}</strong>
                  <span className="subtle">function</span>
                  {!readOnly ? (
                    <div className="message-actions">
                      <Button
                        size="sm"
                        variant="ghost"
                        aria-label={`Remove tool ${index + 1}`}
                        onClick={() => remove(index)}
                      >
                        <TrashIcon size={14} />
                      </Button>
                    </div>
                  ) : null}
                </div>
                <div className="tool-fields">
                  <Field
                    id={`tool-${index}-name`}
                    label={
                      <>
                        Name<span className="visually-hidden"> of tool {index + 1}</span>
                      </>
                    }
                    error={issue('name')}
                  >
                    <Input
                      className="mono"
                      placeholder="get_weather"
                      value={tool.name}
                      readOnly={readOnly}
                      spellCheck={false}
                      autoComplete="off"
                      onChange={(e) => update(index, { name: e.target.value })}
                    />
                  </Field>
                  <Field
                    id={`tool-${index}-description`}
                    label={
                      <>
                        Description<span className="visually-hidden"> of tool {index + 1}</span>
                      </>
                    }
                    error={issue('description')}
                  >
                    <Input
                      placeholder="Current weather for a city."
                      value={tool.description}
                      readOnly={readOnly}
                      onChange={(e) => update(index, { description: e.target.value })}
                    />
                  </Field>
                </div>
                <Field
                  id={`tool-${index}-parameters`}
                  label={
                    <>
                      Parameters<span className="visually-hidden"> of tool {index + 1}</span>
                    </>
                  }
                  error={issue('parameters')}
                  hint="A JSON Schema object describing the arguments."
                >
                  <textarea
                    id={`tool-${index}-parameters`}
                    className="textarea mono"
                    aria-invalid={issue('parameters') ? true : undefined}
                    aria-describedby={[
                      issue('parameters') ? `tool-${index}-parameters-error` : '',
                      `tool-${index}-parameters-hint`,
                    ]
                      .filter(Boolean)
                      .join(' ')}
                    rows={Math.min(14, Math.max(4, text.split('\n').length + 1))}
                    value={text}
                    readOnly={readOnly}
                    spellCheck={false}
                    onChange={(e) => editParameters(index, e.target.value)}
                  />
                </Field>
              </li>
            );
          })}
        </ol>
      ) : null}
      {!readOnly ? (
        <div>
          <Button
            size="sm"
            icon={<PlusIcon size={14} />}
            disabled={tools.length >= toolLimits.tools}
            title={tools.length >= toolLimits.tools ? `At most ${toolLimits.tools} tools.` : undefined}
            onClick={add}
          >
            Add tool
          </Button>
        </div>
      ) : null}
    </div>
  );
}
