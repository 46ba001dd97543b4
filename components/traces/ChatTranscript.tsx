'use client';

import { useState } from 'react';
import { Button } from '@/components/ui/Button';
import type { ChatContent, ChatMessage, ChatPart, ContentSection, SpanError } from './chat';
import { JsonBlock } from './JsonBlock';

// Text past this many characters starts cut, with a button for the rest; a transcript past this
// many messages shows the last ones first (the newest turns matter most), with a button for the rest.
const textPreviewChars = 1200;
const messagesShown = 60;

const roleLabels: Record<string, string> = {
  system: 'System',
  developer: 'Developer',
  user: 'User',
  human: 'User',
  assistant: 'Assistant',
  ai: 'Assistant',
  model: 'Model',
  tool: 'Tool',
  function: 'Tool',
};

const roleLabel = (role: string | null, fallback: string) =>
  role === null ? fallback : (roleLabels[role] ?? role.charAt(0).toUpperCase() + role.slice(1));
const roleTone = (role: string | null) => (role !== null && Object.hasOwn(roleLabels, role) ? role : 'other');

/** Long text cut to a preview until asked; keeps line breaks. */
export function LongText({ text, limit = textPreviewChars }: { text: string; limit?: number }) {
  const [expanded, setExpanded] = useState(false);
  const long = text.length > limit;
  return (
    <>
      <span className="chat-text">{long && !expanded ? `${text.slice(0, limit).trimEnd()}…` : text}</span>
      {long ? (
        <Button
          size="sm"
          variant="ghost"
          className="chat-more"
          aria-expanded={expanded}
          onClick={() => setExpanded(!expanded)}
        >
          {expanded ? 'Show less' : `Show all ${text.length.toLocaleString('en-US')} characters`}
        </Button>
      ) : null}
    </>
  );
}

// Arguments and results: JSON pretty-printed, text as text.
function Payload({ value, label }: { value: unknown; label: string }) {
  if (value === null || value === undefined) return <p className="chat-empty">None</p>;
  if (typeof value === 'string') {
    return (
      <div className="chat-payload-text">
        <LongText text={value} />
      </div>
    );
  }
  return <JsonBlock value={JSON.stringify(value)} label={label} />;
}

function Part({ part }: { part: ChatPart }) {
  switch (part.kind) {
    case 'text':
      return (
        <div className="chat-part-text">
          <LongText text={part.text} />
        </div>
      );
    case 'tool_call':
      return (
        <div className="chat-tool chat-tool-call" role="group" aria-label={`Tool call ${part.name ?? ''}`.trim()}>
          <div className="chat-tool-head">
            <span className="chat-tool-kind">Tool call</span>
            <code className="chat-tool-name">{part.name ?? 'unnamed'}</code>
            {part.id ? (
              <code className="chat-tool-id" title="Tool call id">
                {part.id}
              </code>
            ) : null}
          </div>
          <Payload value={part.arguments} label={`Arguments of ${part.name ?? 'the tool call'}`} />
        </div>
      );
    case 'tool_result':
      return (
        <div className="chat-tool chat-tool-result" role="group" aria-label={`Tool result ${part.name ?? ''}`.trim()}>
          <div className="chat-tool-head">
            <span className="chat-tool-kind">Tool result</span>
            {part.name ? <code className="chat-tool-name">{part.name}</code> : null}
            {part.id ? (
              <code className="chat-tool-id" title="Tool call id">
                {part.id}
              </code>
            ) : null}
          </div>
          <Payload value={part.result} label={`Result of ${part.name ?? part.id ?? 'the tool call'}`} />
        </div>
      );
    default:
      return (
        <div className="chat-tool chat-part-other">
          <div className="chat-tool-head">
            <span className="chat-tool-kind">{part.type ?? 'Value'}</span>
          </div>
          <Payload value={part.value} label={`${part.type ?? 'Value'} part`} />
        </div>
      );
  }
}

function Message({ message, fallbackRole }: { message: ChatMessage; fallbackRole: string }) {
  return (
    <li className="chat-message" data-role={roleTone(message.role)}>
      <div className="chat-message-head">
        <span className="chat-role">{roleLabel(message.role, fallbackRole)}</span>
        {message.name ? <span className="chat-name">{message.name}</span> : null}
        {message.finishReason ? (
          <span className="chat-finish" title="Finish reason">
            {message.finishReason}
          </span>
        ) : null}
      </div>
      {message.parts.length ? (
        message.parts.map((part, index) => <Part key={index} part={part} />)
      ) : (
        <p className="chat-empty">No content</p>
      )}
    </li>
  );
}

function Messages({ messages, title }: { messages: ChatMessage[]; title: string }) {
  const [all, setAll] = useState(false);
  const hidden = all ? 0 : Math.max(messages.length - messagesShown, 0);
  return (
    <>
      {hidden ? (
        <Button size="sm" variant="ghost" className="chat-more" onClick={() => setAll(true)}>
          Show {hidden.toLocaleString('en-US')} earlier messages
        </Button>
      ) : null}
      <ol className="chat-messages" aria-label={`${title} messages`}>
        {messages.slice(hidden).map((message, index) => (
          <Message key={hidden + index} message={message} fallbackRole={title} />
        ))}
      </ol>
    </>
  );
}

function Section({ name, title = name, section }: { name: string; title?: string; section: ContentSection | null }) {
  if (!section) return null;
  return (
    <div className="chat-section">
      <h4 className="chat-section-title">{title}</h4>
      {section.kind === 'messages' ? (
        <Messages messages={section.messages} title={name} />
      ) : (
        <JsonBlock value={JSON.stringify(section.value)} label={`${name} JSON`} />
      )}
    </div>
  );
}

function SpanErrorView({ error }: { error: SpanError }) {
  return (
    <div className="span-error" role="group" aria-label="Error">
      <div className="span-error-head">
        <span className="span-error-type">{error.type}</span>
      </div>
      {error.message ? (
        <p className="span-error-message">
          <LongText text={error.message} limit={600} />
        </p>
      ) : null}
      {error.stacktrace ? (
        <details className="span-error-stack">
          <summary>Stack trace</summary>
          <pre>{error.stacktrace}</pre>
        </details>
      ) : null}
    </div>
  );
}

/** System, input and output as a transcript, then the error and any other content. */
export function ChatTranscript({ content }: { content: ChatContent }) {
  return (
    <div className="chat">
      <Section name="System" title="System instructions" section={content.system} />
      <Section name="Input" section={content.input} />
      <Section name="Output" section={content.output} />
      {content.error ? (
        <div className="chat-section">
          <h4 className="chat-section-title">Error</h4>
          <SpanErrorView error={content.error} />
        </div>
      ) : null}
      {content.extra ? (
        <div className="chat-section">
          <h4 className="chat-section-title">Other content</h4>
          <JsonBlock value={JSON.stringify(content.extra)} label="Other content JSON" />
        </div>
      ) : null}
    </div>
  );
}
