import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrompt } from '../helpers/prompts';
import { drain, importRows, resultRows } from '../helpers/evals';
import { newTeam } from '../helpers/api';
import { startFakeProvider, type FakeProvider } from '../helpers/openai-server';
import { caller } from '../helpers/trpc';

// The playground and the evaluation engine send a content's tools and maxOutputTokens to an
// OpenAI-compatible route, and a tool call in the answer is the output (as JSON), scored like any other.

let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
  process.env.MODEL_RETRY_BASE_MS = '0';
  process.env.MODEL_ROUTES = JSON.stringify([
    { id: 'fake/gpt-4o', provider: 'fake', name: 'Fake 4o', baseUrl: fake.baseUrl, modelId: 'gpt-4o' },
    { id: 'fake/o4', provider: 'openai', name: 'Fake o4', baseUrl: fake.baseUrl, modelId: 'o4-mini' },
  ]);
});
afterAll(async () => {
  await fake.close();
  delete process.env.MODEL_ROUTES;
  delete process.env.MODEL_RETRY_BASE_MS;
});

const weather = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Current weather for a city.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const functionDefinition = {
  type: 'function',
  function: { name: weather.name, description: weather.description, parameters: weather.parameters },
};

async function drainEvents(iterable: AsyncIterable<any>) {
  const events: any[] = [];
  for await (const event of iterable) events.push(event);
  return events;
}

describe('playground runs with tools and an output token limit', () => {
  it('sends the tools and max_tokens; a streamed tool call is the done output', async () => {
    const { org, editor } = await newTeam();
    const prompt = await createPrompt(editor, org.id);
    fake.script([
      {
        kind: 'stream',
        chunks: [],
        toolCalls: [{ name: 'get_weather', arguments: '{"city":"Paris"}' }],
        usage: { prompt_tokens: 30, completion_tokens: 12 },
      },
    ]);
    const trpc = await caller(editor.id);
    const events = await drainEvents(
      await trpc.playground.run({
        organizationId: org.id,
        promptId: prompt.id,
        content: {
          messages: [{ role: 'system', content: 'Use the tools.' }],
          inputType: 'user_message',
          modelRouteId: 'fake/gpt-4o',
          tools: [weather],
          maxOutputTokens: 120,
        },
        input: 'Weather in Paris?',
      }),
    );
    expect(events.at(-1)).toMatchObject({
      type: 'done',
      output: '[{"name":"get_weather","arguments":{"city":"Paris"}}]',
      inputTokens: 30,
      outputTokens: 12,
      finishReason: 'tool_calls',
    });
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0].body).toMatchObject({
      model: 'gpt-4o',
      stream: true,
      max_tokens: 120,
      tools: [functionDefinition],
    });
    expect(fake.requests[0].body).not.toHaveProperty('max_completion_tokens');
  });

  it('an OpenAI route gets max_completion_tokens; the local echo is cut to the limit', async () => {
    const { org, editor } = await newTeam();
    const prompt = await createPrompt(editor, org.id);
    const trpc = await caller(editor.id);
    fake.script([{ kind: 'stream', chunks: ['Sunny.'] }]);
    const base = { organizationId: org.id, promptId: prompt.id, input: 'one two three four' };
    const content = { messages: [], inputType: 'user_message' as const, tools: [weather], maxOutputTokens: 2 };
    const openAi = await drainEvents(
      await trpc.playground.run({ ...base, content: { ...content, modelRouteId: 'fake/o4' } }),
    );
    expect(openAi.at(-1)).toMatchObject({ output: 'Sunny.', finishReason: 'stop' });
    expect(fake.requests[0].body).toMatchObject({ max_completion_tokens: 2, tools: [functionDefinition] });
    expect(fake.requests[0].body).not.toHaveProperty('max_tokens');
    const local = await drainEvents(await trpc.playground.run({ ...base, content }));
    expect(local.at(-1)).toMatchObject({ output: 'one two', outputTokens: 2, finishReason: 'length' });
  });
});

describe('evaluation runs with tools', () => {
  it('a baseline freezes the tools and limit, sends them on every case, and scores tool-call outputs against JSON references', async () => {
    const { org, editor } = await newTeam();
    const prompt = await createPrompt(editor, org.id, 'Weather tools');
    const base = `/organizations/${org.id}/prompts/${prompt.id}`;
    const content = {
      messages: [{ role: 'system', content: 'Call get_weather for the city asked about.' }],
      inputType: 'user_message',
      modelRouteId: 'fake/gpt-4o',
      temperature: 0,
      tools: [weather],
      maxOutputTokens: 64,
    };
    const draft = await editor.call('PUT', `${base}/draft`, { body: { content, revision: 0 } });
    expect(draft.status, JSON.stringify(draft.body)).toBe(200);
    await importRows(editor, org.id, prompt.id, [
      // Key order and spacing differ from the model's output: compared as JSON.
      {
        input: 'Paris?',
        expectedOutput: '[{"arguments": {"city": "Paris"}, "name": "get_weather"}]',
        referenceFormat: 'json',
      },
      {
        input: 'Oslo?',
        expectedOutput: '[{"name":"get_weather","arguments":{"city":"Oslo"}}]',
        referenceFormat: 'json',
      },
    ] as never);
    fake.script([
      { kind: 'ok', text: null, toolCalls: [{ name: 'get_weather', arguments: '{"city":"Paris"}' }] },
      // Text beside the call is not part of the output; the wrong city fails the case.
      { kind: 'ok', text: 'Checking…', toolCalls: [{ name: 'get_weather', arguments: '{"city":"Bergen"}' }] },
    ]);
    const initialized = await editor.call('POST', `${base}/initialize`, {
      body: { draftRevision: draft.body.revision, scoringMethod: 'expected' },
    });
    expect(initialized.status, JSON.stringify(initialized.body)).toBe(201);
    await drain();

    expect(fake.requests).toHaveLength(2);
    for (const request of fake.requests) {
      expect(request.body).toMatchObject({
        model: 'gpt-4o',
        stream: false,
        max_tokens: 64,
        tools: [functionDefinition],
      });
    }
    const results = await resultRows(initialized.body.candidateRunId);
    const byInput = Object.fromEntries(results.map((r) => [r.input, r]));
    expect(byInput['Paris?']).toMatchObject({
      status: 'scored',
      passed: true,
      output: '[{"name":"get_weather","arguments":{"city":"Paris"}}]',
    });
    expect(byInput['Oslo?']).toMatchObject({
      status: 'scored',
      passed: false,
      output: '[{"name":"get_weather","arguments":{"city":"Bergen"}}]',
    });

    // The baseline publishes the frozen content as version 1, tools and limit included.
    const evaluation = await editor.call('GET', `/organizations/${org.id}/evals/${initialized.body.id}`);
    expect(evaluation.body).toMatchObject({ status: 'completed', version: 1 });
    const v1 = await editor.call('GET', `${base}/versions/1`);
    expect(v1.body.content).toMatchObject({ tools: [weather], maxOutputTokens: 64 });
  });

  it('the frozen snapshot covers tools and maxOutputTokens: a changed limit is another snapshot', async () => {
    const { org, editor } = await newTeam();
    const prompt = await createPrompt(editor, org.id, 'Frozen tools');
    const base = `/organizations/${org.id}/prompts/${prompt.id}`;
    const content = { messages: [{ role: 'system', content: 'Repeat.' }], inputType: 'user_message', tools: [weather] };
    const first = await editor.call('PUT', `${base}/draft`, { body: { content, revision: 0 } });
    await importRows(editor, org.id, prompt.id, [{ input: 'a', expectedOutput: 'a' }]);
    const initialize = (draftRevision: number) =>
      editor.call('POST', `${base}/initialize`, { body: { draftRevision, scoringMethod: 'expected' } });
    const started = await initialize(first.body.revision);
    expect(started.status).toBe(201);
    // The same draft content under a new revision is the same snapshot: the same evaluation answers.
    const same = await editor.call('PUT', `${base}/draft`, { body: { content, revision: first.body.revision } });
    expect((await initialize(same.body.revision)).body.id).toBe(started.body.id);
    for (const change of [{ maxOutputTokens: 10 }, { tools: [] }]) {
      const current = (await editor.call('GET', `${base}/draft`)).body.revision;
      const changed = await editor.call('PUT', `${base}/draft`, {
        body: { content: { ...content, ...change }, revision: current },
      });
      const refused = await initialize(changed.body.revision);
      expect(refused.status).toBe(409);
      expect(refused.body.error.details).toMatchObject({
        state: 'baseline_in_progress',
        evaluationId: started.body.id,
      });
    }
  });
});
