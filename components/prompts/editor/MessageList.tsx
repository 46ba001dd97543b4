'use client';

import { useEffect, useRef } from 'react';
import { Button } from '@/components/ui/Button';
import { Select } from '@/components/ui/Field';
import { PlusIcon, TrashIcon } from '@/components/ui/icons';
import { DragHandle } from '../DragHandle';
import { moveItem, useDragReorder } from '../dragReorder';
import { roleOptions, type DraftContent, type MessageRole } from '../types';
import { FieldError } from '@/components/ui/FieldError';
import { TemplateTextarea } from './TemplateTextarea';

type Message = DraftContent['messages'][number];

const placeholders: Record<MessageRole, string> = {
  system: 'You are a helpful assistant for {{product}}…',
  user: 'Write what the user says, or use {{variables}}…',
  assistant: 'An example answer from the assistant…',
};

export function MessageList({
  messages,
  readOnly,
  issues,
  onChange,
}: {
  messages: Message[];
  readOnly: boolean;
  issues: Record<string, string>;
  onChange: (messages: Message[]) => void;
}) {
  const rows = useRef<(HTMLLIElement | null)[]>([]);
  const addButton = useRef<HTMLButtonElement>(null);
  // Where keyboard focus goes once a change has rendered: into the new message, after the moved one
  // (so pressing ↑ again keeps moving it), or to a neighbour of the removed one.
  const focusAfter = useRef<{ index: number; on: 'content' | 'up' | 'down' } | null>(null);
  useEffect(() => {
    const target = focusAfter.current;
    if (!target) return;
    focusAfter.current = null;
    const row = rows.current[Math.min(target.index, messages.length - 1)];
    const button = (direction: string) =>
      row?.querySelector<HTMLButtonElement>(`button[aria-label$=" ${direction}"]:not(:disabled)`);
    const element =
      target.on === 'content'
        ? row?.querySelector('textarea')
        : (button(target.on) ?? button(target.on === 'up' ? 'down' : 'up') ?? row?.querySelector('textarea'));
    (element ?? addButton.current)?.focus();
  }, [messages]);
  const move = (from: number, to: number) => {
    focusAfter.current = { index: to, on: to < from ? 'up' : 'down' };
    onChange(moveItem(messages, from, to));
  };
  const drag = useDragReorder(move, !readOnly);
  const update = (index: number, patch: Partial<Message>) =>
    onChange(messages.map((message, i) => (i === index ? { ...message, ...patch } : message)));
  const nextRole: MessageRole =
    messages.length === 0 ? 'system' : messages.at(-1)?.role === 'user' ? 'assistant' : 'user';

  return (
    <div className="stack-sm">
      {issues['content.messages'] ? <FieldError id="messages-error" message={issues['content.messages']} /> : null}
      {messages.length === 0 ? (
        <p className="message-empty muted">
          {readOnly
            ? 'This draft has no messages.'
            : 'No messages yet. Start with a system message that tells the model its job.'}
        </p>
      ) : null}
      <ol className="message-list" aria-label="Messages">
        {messages.map((message, index) => {
          const errorKey = `content.messages.${index}.content`;
          const error =
            issues[errorKey] ??
            issues[`content.messages.${index}`] ??
            (message.content.trim() === '' ? 'Write the message, or remove it.' : null);
          return (
            <li
              key={index}
              className="message"
              ref={(el) => void (rows.current[index] = el)}
              data-role={message.role}
              {...drag.targetProps(index)}
            >
              <div className="message-head">
                {!readOnly ? <DragHandle handle={drag.handleProps(index, () => rows.current[index])} /> : null}
                <Select
                  compact
                  aria-label={`Role of message ${index + 1}`}
                  value={message.role}
                  disabled={readOnly}
                  onChange={(e) => update(index, { role: e.target.value as MessageRole })}
                >
                  {roleOptions.map((option) => (
                    <option key={option.value} value={option.value}>
                      {option.label}
                    </option>
                  ))}
                </Select>
                {!readOnly ? (
                  <div className="message-actions">
                    <Button
                      size="sm"
                      variant="ghost"
                      aria-label={`Move message ${index + 1} up`}
                      disabled={index === 0}
                      onClick={() => move(index, index - 1)}
                    >
                      ↑
                    </Button>
                    <Button
                      size="sm"
                      variant="ghost"
                      aria-label={`Move message ${index + 1} down`}
                      disabled={index === messages.length - 1}
                      onClick={() => move(index, index + 1)}
                    >
                      ↓
                    </Button>
                    <Button
                      size="sm"
                      variant="ghost"
                      aria-label={`Remove message ${index + 1}`}
                      onClick={() => {
                        focusAfter.current = { index, on: 'content' };
                        onChange(messages.filter((_, i) => i !== index));
                      }}
                    >
                      <TrashIcon size={14} />
                    </Button>
                  </div>
                ) : null}
              </div>
              <TemplateTextarea
                aria-label={`Content of message ${index + 1}`}
                value={message.content}
                readOnly={readOnly}
                placeholder={placeholders[message.role]}
                aria-invalid={error ? true : undefined}
                aria-describedby={error ? `message-${index}-error` : undefined}
                onChange={(content) => update(index, { content })}
              />
              <FieldError id={`message-${index}-error`} message={error} />
            </li>
          );
        })}
      </ol>
      {!readOnly ? (
        <div>
          <Button
            ref={addButton}
            size="sm"
            icon={<PlusIcon size={14} />}
            onClick={() => {
              focusAfter.current = { index: messages.length, on: 'content' };
              onChange([...messages, { role: nextRole, content: '' }]);
            }}
          >
            {messages.length === 0 ? 'Add system message' : 'Add message'}
          </Button>
        </div>
      ) : null}
    </div>
  );
}
