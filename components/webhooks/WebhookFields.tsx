'use client';

import { useId } from 'react';
import { Field, Input } from '@/components/ui/Field';
import { FieldError } from '@/components/ui/FieldError';
import { webhookLimits } from '@/server/webhooks/schemas';
import { eventOptions } from './events';
import type { EventType, WebhookFieldErrors, WebhookValues } from './form';

// The fields of the new-endpoint and edit forms: URL, the events it receives, a description.
export function WebhookFields({
  values,
  errors,
  onChange,
}: {
  values: WebhookValues;
  errors: WebhookFieldErrors;
  onChange: (values: WebhookValues) => void;
}) {
  const eventsId = useId();
  const toggle = (type: EventType, on: boolean) =>
    onChange({
      ...values,
      // Kept in the catalogue's order, whatever order they were ticked in.
      events: eventOptions.map((o) => o.type).filter((t) => (t === type ? on : values.events.includes(t))),
    });
  return (
    <>
      <Field
        label="Endpoint URL"
        error={errors.url}
        hint="Receives a signed POST for each event. Use https://; redirects are not followed."
      >
        <Input
          name="url"
          type="url"
          inputMode="url"
          value={values.url}
          placeholder="https://example.com/hooks/promptloop"
          maxLength={webhookLimits.urlChars + 100}
          autoComplete="off"
          spellCheck={false}
          onChange={(e) => onChange({ ...values, url: e.target.value })}
          autoFocus
        />
      </Field>
      <fieldset
        className="webhook-events"
        aria-describedby={errors.events ? `${eventsId}-error` : undefined}
        aria-invalid={errors.events ? true : undefined}
      >
        <legend className="field-label">Events</legend>
        {eventOptions.map((option) => {
          const checked = values.events.includes(option.type);
          return (
            <label key={option.type} className="webhook-event" data-checked={checked || undefined}>
              <input
                type="checkbox"
                name="events"
                value={option.type}
                checked={checked}
                onChange={(e) => toggle(option.type, e.target.checked)}
              />
              <span>
                <code className="webhook-event-type">{option.type}</code>
                <span className="webhook-event-text">{option.description}</span>
              </span>
            </label>
          );
        })}
        <FieldError id={`${eventsId}-error`} message={errors.events} />
      </fieldset>
      <Field
        label="Description (optional)"
        error={errors.description}
        hint={`What receives these events, e.g. “Slack relay” or “Deploy pipeline”. At most ${webhookLimits.descriptionChars} characters.`}
      >
        <Input
          name="description"
          value={values.description}
          maxLength={webhookLimits.descriptionChars + 100}
          onChange={(e) => onChange({ ...values, description: e.target.value })}
        />
      </Field>
    </>
  );
}
