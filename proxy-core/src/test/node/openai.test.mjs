// openai-node, unmodified, against the gateway's OpenAI-style endpoints (contract 1, 2, 3.11,
// 4.4, 7). Each chat test runs once per chat model (in-process simulator, then the standalone
// simulator behind an `openai` provider); each embeddings test once per embedding model.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import {
  CHAT_MODELS,
  EMBED_MODELS,
  GATEWAY_KEY,
  OPENAI_BASE_URL,
  REQUEST_ID,
  TEST_TIMEOUT_MS,
  WEATHER_TOOL_SCHEMA,
  assertSameVector,
  expectError,
  recordingFetch,
} from './gateway-env.mjs';

const WEATHER_TOOL = {
  type: 'function',
  function: { name: 'get_weather', description: 'Current weather in a city', parameters: WEATHER_TOOL_SCHEMA },
};

function client(options = {}) {
  return new OpenAI({ apiKey: GATEWAY_KEY, baseURL: OPENAI_BASE_URL, timeout: 20_000, ...options });
}

for (const model of CHAT_MODELS) {
  describe(`openai chat on ${model}`, { timeout: TEST_TIMEOUT_MS }, () => {
    test('create_nonStream_returnsAssistantText', async () => {
      const { data: completion, request_id } = await client()
        .chat.completions.create({ model, messages: [{ role: 'user', content: 'Say hello to the gateway.' }] })
        .withResponse();
      assert.match(request_id, REQUEST_ID);
      assert.equal(completion.object, 'chat.completion');
      assert.match(completion.id, /^chatcmpl-/);
      assert.equal(typeof completion.created, 'number');
      assert.equal(typeof completion.model, 'string');
      assert.equal(completion.choices.length, 1);
      const choice = completion.choices[0];
      assert.equal(choice.index, 0);
      assert.equal(choice.finish_reason, 'stop');
      assert.equal(choice.message.role, 'assistant');
      assert.equal(typeof choice.message.content, 'string');
      assert.ok(choice.message.content.length > 0, 'non-empty content');
      assert.ok(completion.usage.prompt_tokens > 0);
      assert.ok(completion.usage.completion_tokens > 0);
      assert.equal(completion.usage.total_tokens, completion.usage.prompt_tokens + completion.usage.completion_tokens);
    });

    test('create_maxTokens_finishesWithLength', async () => {
      const completion = await client().chat.completions.create({
        model,
        max_completion_tokens: 3,
        messages: [{ role: 'user', content: 'Tell me a long story.' }],
      });
      assert.equal(completion.choices[0].finish_reason, 'length');
      assert.ok(completion.usage.completion_tokens <= 3, `completion_tokens ${completion.usage.completion_tokens}`);
    });

    test('create_streamWithIncludeUsage_concatenatesContentAndEndsWithUsageChunk', async () => {
      const recorder = recordingFetch();
      const stream = await client({ fetch: recorder.fetch }).chat.completions.create({
        model,
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'Stream a short greeting.' }],
      });
      const chunks = [];
      for await (const chunk of stream) {
        chunks.push(chunk);
      }
      assert.ok(chunks.length >= 3, `got ${chunks.length} chunks`);
      const head = recorder.last().responseHeaders;
      assert.equal(head['content-type'], 'text/event-stream; charset=utf-8');
      assert.equal(head['cache-control'], 'no-cache');
      assert.match(head['x-request-id'], REQUEST_ID);
      assert.equal(head['request-id'], head['x-request-id']);
      const ids = new Set(chunks.map((c) => c.id));
      const created = new Set(chunks.map((c) => c.created));
      assert.equal(ids.size, 1, 'one id on every chunk');
      assert.equal(created.size, 1, 'one created on every chunk');
      for (const c of chunks) {
        assert.equal(c.object, 'chat.completion.chunk');
        assert.ok(Array.isArray(c.choices), 'choices always present');
      }

      const usageChunk = chunks[chunks.length - 1];
      assert.deepEqual(usageChunk.choices, [], 'the usage chunk has choices: []');
      assert.ok(usageChunk.usage.prompt_tokens > 0);
      assert.ok(usageChunk.usage.completion_tokens > 0);
      assert.equal(usageChunk.usage.total_tokens, usageChunk.usage.prompt_tokens + usageChunk.usage.completion_tokens);

      const others = chunks.slice(0, -1);
      for (const c of others) {
        assert.equal(c.usage ?? null, null, 'usage is null on every chunk but the last');
        assert.equal(c.choices.length, 1, 'only the usage chunk has empty choices');
      }
      assert.equal(others[0].choices[0].delta.role, 'assistant', 'role in the first chunk');
      const text = others.map((c) => c.choices[0].delta.content ?? '').join('');
      assert.ok(text.length > 0, 'content concatenates to text');
      const finishing = others.filter((c) => c.choices[0].finish_reason != null);
      assert.equal(finishing.length, 1, 'exactly one finishing chunk');
      assert.equal(finishing[0].choices[0].finish_reason, 'stop');
      assert.equal(finishing[0], others[others.length - 1], 'finishing chunk comes last before usage');
    });

    test('create_streamWithoutIncludeUsage_hasNoUsageChunk', async () => {
      const stream = await client().chat.completions.create({
        model,
        stream: true,
        messages: [{ role: 'user', content: 'Stream without usage.' }],
      });
      const chunks = [];
      for await (const chunk of stream) {
        chunks.push(chunk);
      }
      assert.ok(chunks.length >= 2);
      for (const c of chunks) {
        assert.equal(c.choices.length, 1, 'no chunk with empty choices');
        assert.equal(c.usage ?? null, null, 'no usage without include_usage');
      }
      assert.equal(chunks[chunks.length - 1].choices[0].finish_reason, 'stop');
    });

    test('streamHelper_withTools_finalCompletionHasParsableToolCalls', async () => {
      const stream = client().chat.completions.stream({
        model,
        tools: [WEATHER_TOOL],
        messages: [{ role: 'user', content: 'What is the weather in Oslo?' }],
      });
      const argumentsDone = [];
      stream.on('tool_calls.function.arguments.done', (e) => argumentsDone.push(e));
      const completion = await stream.finalChatCompletion();

      const choice = completion.choices[0];
      assert.equal(choice.finish_reason, 'tool_calls');
      assert.equal(choice.message.role, 'assistant');
      assert.ok(choice.message.tool_calls?.length >= 1, 'at least one tool call');
      for (const call of choice.message.tool_calls) {
        assert.equal(call.type, 'function');
        assert.equal(call.function.name, 'get_weather');
        assert.ok(typeof call.id === 'string' && call.id.length > 0, 'tool call id');
        const args = JSON.parse(call.function.arguments);
        assert.equal(typeof args, 'object');
        assert.equal(typeof args.city, 'string', `required "city" in ${call.function.arguments}`);
      }
      assert.equal(argumentsDone.length, choice.message.tool_calls.length, 'one arguments.done event per call');
      assert.equal(argumentsDone[0].name, 'get_weather');
    });

    test('toolRoundTrip_toolResultSentBack_answersWithText', async () => {
      const c = client();
      const messages = [{ role: 'user', content: 'What is the weather in Oslo?' }];
      const first = await c.chat.completions.create({ model, tools: [WEATHER_TOOL], messages });
      const assistant = first.choices[0].message;
      assert.equal(first.choices[0].finish_reason, 'tool_calls');
      assert.ok(assistant.tool_calls?.length >= 1);

      messages.push(assistant);
      for (const call of assistant.tool_calls) {
        messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify({ temperature: 7, unit: 'celsius' }) });
      }
      const second = await c.chat.completions.create({ model, tools: [WEATHER_TOOL], messages });
      assert.equal(second.choices[0].finish_reason, 'stop');
      assert.equal(typeof second.choices[0].message.content, 'string');
      assert.ok(second.choices[0].message.content.length > 0);
      assert.ok(!second.choices[0].message.tool_calls?.length, 'no further tool calls');

      // The same second turn through the stream helper.
      const streamed = client().chat.completions.stream({ model, tools: [WEATHER_TOOL], messages });
      const content = await streamed.finalContent();
      assert.ok(typeof content === 'string' && content.length > 0);
      const final = await streamed.finalChatCompletion();
      assert.equal(final.choices[0].finish_reason, 'stop');
    });

    test('stop_matched_contentEndsBeforeIt_inStreamToo', async () => {
      // The simulator's answer depends on the conversation only: stream and non-stream say the same
      // words, and a word of the free answer is sure to occur again when it becomes a stop sequence.
      const params = { model, messages: [{ role: 'user', content: 'Many words, please.' }] };
      const free = (await client().chat.completions.create(params)).choices[0].message.content;
      let streamedFree = '';
      for await (const chunk of await client().chat.completions.create({ ...params, stream: true })) {
        streamedFree += chunk.choices[0]?.delta?.content ?? '';
      }
      assert.equal(streamedFree, free, 'stream fragments concatenate to the non-stream content');

      const words = free.split(' ');
      assert.ok(words.length >= 4, `a long enough answer: ${free}`);
      const stop = ` ${words[2]}`;
      const expected = free.slice(0, free.indexOf(stop));
      const cut = await client().chat.completions.create({ ...params, stop: [stop] });
      assert.equal(cut.choices[0].finish_reason, 'stop');
      assert.equal(cut.choices[0].message.content, expected);
      const streamedCut = await client().chat.completions.stream({ ...params, stop: [stop] }).finalContent();
      assert.equal(streamedCut, expected);
    });

    test('create_nTwo_returnsTwoChoices_streamHelperAccumulatesBoth', async () => {
      const body = { model, n: 2, messages: [{ role: 'user', content: 'Two answers, please.' }] };
      const completion = await client().chat.completions.create(body);
      assert.deepEqual(completion.choices.map((c) => c.index), [0, 1]);
      for (const choice of completion.choices) {
        assert.equal(choice.message.role, 'assistant');
        assert.ok(choice.message.content.length > 0);
      }
      const final = await client().chat.completions.stream(body).finalChatCompletion();
      assert.deepEqual(final.choices.map((c) => c.index), [0, 1]);
      for (const choice of final.choices) {
        assert.equal(choice.message.role, 'assistant');
        assert.ok(choice.message.content.length > 0);
        assert.equal(choice.finish_reason, 'stop');
      }
    });

    test('auth_xApiKeyInsteadOfBearer_isAccepted', async () => {
      const completion = await client({
        apiKey: 'unused',
        defaultHeaders: { Authorization: null, 'x-api-key': GATEWAY_KEY },
      }).chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(completion.choices[0].message.role, 'assistant');
    });

    test('auth_bearerAndXApiKeyDisagree_isAuthenticationError', async () => {
      await expectError(OpenAI.AuthenticationError, () =>
        client({ maxRetries: 0, defaultHeaders: { 'x-api-key': 'sk-someone-else' } }).chat.completions.create({
          model,
          messages: [{ role: 'user', content: 'hi' }],
        }),
      );
    });

    test('errors_unknownModel_isNotFoundError', async () => {
      const err = await expectError(OpenAI.NotFoundError, () =>
        client({ maxRetries: 0 }).chat.completions.create({
          model: 'no-such-model',
          messages: [{ role: 'user', content: 'hi' }],
        }),
      );
      assert.equal(err.status, 404);
      assert.equal(err.code, 'model_not_found');
      assert.match(err.requestID, REQUEST_ID);
    });

    test('errors_missingMessages_isBadRequestError', async () => {
      const err = await expectError(OpenAI.BadRequestError, () =>
        client({ maxRetries: 0 }).chat.completions.create({ model }),
      );
      assert.equal(err.status, 400);
      assert.equal(err.type, 'invalid_request_error');
      assert.equal(err.param, 'messages');
    });

    test('errors_wrongKeyOnStream_isAuthenticationErrorBeforeAnyChunk', async () => {
      const err = await expectError(OpenAI.AuthenticationError, () =>
        client({ apiKey: 'sk-wrong', maxRetries: 0 }).chat.completions.create({
          model,
          stream: true,
          messages: [{ role: 'user', content: 'hi' }],
        }),
      );
      assert.equal(err.status, 401);
    });
  });
}

// Faults injected by the simulator through x-sim-fault (the standalone providers forward x-sim-*):
// what the SDK user sees when the upstream fails before or during a stream (contract 2.3, 7.3, 7.6).
for (const model of CHAT_MODELS) {
  describe(`openai upstream faults on ${model}`, { timeout: TEST_TIMEOUT_MS }, () => {
    const fault = (spec) => ({ headers: { 'x-sim-fault': spec } });
    const body = { model, messages: [{ role: 'user', content: 'Stream something long.' }] };

    test('stream_errorEventMidStream_sdkThrowsApiError', async () => {
      const stream = await client({ maxRetries: 0 }).chat.completions.create(
        { ...body, stream: true, max_completion_tokens: 40 },
        fault('error_after=2'),
      );
      const chunks = [];
      const err = await expectError(OpenAI.APIError, async () => {
        for await (const chunk of stream) {
          chunks.push(chunk);
        }
      });
      assert.ok(chunks.length >= 1, 'some chunks arrived before the error');
      assert.equal(err.status, undefined, 'an in-stream error has no HTTP status');
      assert.ok(err.error?.message, `error body carried to the SDK: ${JSON.stringify(err.error)}`);
    });

    test('streamHelper_errorEventMidStream_finalCompletionRejects', async () => {
      const stream = client({ maxRetries: 0 }).chat.completions.stream({ ...body, max_completion_tokens: 40 }, fault('error_after=2'));
      await expectError(OpenAI.APIError, () => stream.finalChatCompletion());
    });

    test('stream_connectionCutMidStream_sdkThrows', async () => {
      const stream = await client({ maxRetries: 0 }).chat.completions.create(
        { ...body, stream: true, max_completion_tokens: 40 },
        fault('cut_after=2'),
      );
      await expectError(Error, async () => {
        for await (const chunk of stream) {
          assert.ok(chunk);
        }
      });
    });

    test('upstream429_isRateLimitErrorWithRetryHeaders_andSdkRetries', async () => {
      const recorder = recordingFetch();
      const err = await expectError(OpenAI.RateLimitError, () =>
        client({ maxRetries: 1, fetch: recorder.fetch }).chat.completions.create(body, fault('status=429,retry_after=0')),
      );
      assert.equal(err.status, 429);
      assert.equal(recorder.exchanges.length, 2, 'the SDK retried a 429 once');
      const headers = recorder.last().responseHeaders;
      assert.ok(headers['retry-after'] !== undefined, `Retry-After on 429: ${JSON.stringify(headers)}`);
      assert.ok(headers['retry-after-ms'] !== undefined, `retry-after-ms on 429: ${JSON.stringify(headers)}`);
    });

    test('upstream503_isInternalServerErrorWithStatus503', async () => {
      const err = await expectError(OpenAI.InternalServerError, () =>
        client({ maxRetries: 0 }).chat.completions.create({ ...body, stream: true }, fault('status=503')),
      );
      assert.equal(err.status, 503);
      assert.ok(err.headers.get('retry-after') !== null, 'Retry-After on 503');
    });
  });
}

for (const model of EMBED_MODELS) {
  describe(`openai embeddings on ${model}`, { timeout: TEST_TIMEOUT_MS }, () => {
    test('create_sdkDefaultEncoding_sendsBase64AndDecodesToTheFloatVector', async () => {
      const recorder = recordingFetch({ captureBody: true });
      const input = 'The quick brown fox jumps over the lazy dog';
      const viaDefault = await client({ fetch: recorder.fetch }).embeddings.create({ model, input });
      const sent = recorder.last();
      assert.equal(sent.body.encoding_format, 'base64', 'the SDK asks for base64 by default');
      const raw = JSON.parse(sent.responseText);
      assert.equal(typeof raw.data[0].embedding, 'string', 'the gateway answered with a base64 string');
      assert.match(raw.data[0].embedding, /^[A-Za-z0-9+/]+={0,2}$/);

      assert.equal(viaDefault.object, 'list');
      assert.equal(viaDefault.data.length, 1);
      const vector = viaDefault.data[0].embedding;
      assert.ok(Array.isArray(vector), 'the SDK decoded the string into an array');
      assert.ok(vector.length > 0);
      assert.ok(vector.every((x) => typeof x === 'number' && Number.isFinite(x)));
      assert.ok(viaDefault.usage.prompt_tokens > 0);
      assert.equal(viaDefault.usage.total_tokens, viaDefault.usage.prompt_tokens);

      const viaFloat = await client().embeddings.create({ model, input, encoding_format: 'float' });
      assertSameVector(vector, viaFloat.data[0].embedding, 'base64 vs float');
      assert.equal(Buffer.from(raw.data[0].embedding, 'base64').length, 4 * viaFloat.data[0].embedding.length);
    });

    test('create_batch_keepsOrderAndIndex', async () => {
      const inputs = ['alpha', 'beta gamma', 'delta epsilon zeta'];
      const c = client();
      const batch = await c.embeddings.create({ model, input: inputs });
      assert.equal(batch.data.length, inputs.length);
      for (let i = 0; i < inputs.length; i++) {
        assert.equal(batch.data[i].index, i);
        assert.equal(batch.data[i].object, 'embedding');
        const single = await c.embeddings.create({ model, input: inputs[i] });
        assertSameVector(batch.data[i].embedding, single.data[0].embedding, `batch[${i}] vs single`);
      }
      assert.notDeepEqual(batch.data[0].embedding, batch.data[1].embedding, 'different inputs, different vectors');
    });

    test('errors_wrongKey_isAuthenticationError', async () => {
      const err = await expectError(OpenAI.AuthenticationError, () =>
        client({ apiKey: 'sk-wrong', maxRetries: 0 }).embeddings.create({ model, input: 'x' }),
      );
      assert.equal(err.status, 401);
      assert.equal(err.type, 'invalid_request_error');
    });
  });
}

describe('openai models', { timeout: TEST_TIMEOUT_MS }, () => {
  test('list_returnsEveryConfiguredModel', async () => {
    const ids = [];
    for await (const m of client().models.list()) {
      assert.equal(m.object, 'model');
      ids.push(m.id);
    }
    for (const expected of [...CHAT_MODELS, ...EMBED_MODELS]) {
      assert.ok(ids.includes(expected), `${expected} in ${ids}`);
    }
  });

  test('list_wrongKey_isAuthenticationError', async () => {
    await expectError(OpenAI.AuthenticationError, async () => {
      for await (const m of client({ apiKey: 'sk-wrong', maxRetries: 0 }).models.list()) {
        assert.fail(`unexpected model ${m.id}`);
      }
    });
  });
});
