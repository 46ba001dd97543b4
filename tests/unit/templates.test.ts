import { describe, expect, it } from 'vitest';
import { extractVariables, replaceVariables } from '@/lib/templates';
import { extractVariables as sdkVariables } from '@/sdk/src/prompt';
import { caseMessages, inputWarnings } from '@/server/datasets/case-input';
import { renderMessages } from '@/server/models/render';

// Names that Object.prototype also has must be looked up as the case's own values, never found on the prototype.
const content = {
  inputType: 'variables' as const,
  messages: [
    { role: 'user' as const, content: 'C={{constructor}} H={{ hasOwnProperty }} T={{toString}} P={{__proto__}}' },
  ],
};

describe('template variables named like Object.prototype members', () => {
  it('are ordinary variables, except __proto__, which is plain text (service and SDK alike)', () => {
    expect(extractVariables(content.messages)).toEqual(['constructor', 'hasOwnProperty', 'toString']);
    expect(sdkVariables(content.messages)).toEqual(['constructor', 'hasOwnProperty', 'toString']);
    expect(replaceVariables('{{constructor}} {{__proto__}} {{x}}', {})).toBe('{{constructor}} {{__proto__}} {{x}}');
  });

  it('a value missing for one of them is missing, never the prototype’s function', () => {
    expect(() => renderMessages(content, { variables: { toString: 't' } })).toThrow(
      /Give a value for \{\{constructor\}\}/,
    );
    const messages = renderMessages(content, { variables: { constructor: 'c', hasOwnProperty: 'h', toString: 't' } });
    expect(messages).toEqual([{ role: 'user', content: 'C=c H=h T=t P={{__proto__}}' }]);
  });

  it('a JSON case without them is input_incompatible, and runs once it has them', () => {
    const partial = { id: 'c1', input: '{"toString":"t"}', inputFormat: 'json' as const };
    expect(caseMessages(content, partial)).toEqual({ error: 'Give a value for {{constructor}}.' });
    expect(inputWarnings(content, [partial])).toEqual([
      { code: 'input_incompatible', message: 'Give a value for {{constructor}}.', caseId: 'c1' },
    ]);
    const whole = {
      id: 'c2',
      input: '{"constructor":"c","hasOwnProperty":"h","toString":"t"}',
      inputFormat: 'json' as const,
    };
    expect(caseMessages(content, whole)).toEqual({
      messages: [{ role: 'user', content: 'C=c H=h T=t P={{__proto__}}' }],
    });
    expect(inputWarnings(content, [whole])).toEqual([]);
  });
});
