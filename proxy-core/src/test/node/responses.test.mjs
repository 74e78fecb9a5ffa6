// The official openai SDK's Responses API (contract 12) against the gateway: `responses.create` and
// `responses.stream` (text, a function-call round trip, structured output, the typed events in order with
// increasing sequence_number, the output_text helper, usage by token type) on every way the gateway serves it:
// the in-process simulator (native), an openai provider with the Responses API (pass-through), an openai
// provider with chat completions only and an anthropic provider (both translated).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { GATEWAY_KEY, OPENAI_BASE_URL, TEST_TIMEOUT_MS, WEATHER_TOOL_SCHEMA, expectError } from './gateway-env.mjs';

function list(name) {
  const value = process.env[name];
  if (!value) {
    throw new Error(`environment variable ${name} is not set (run through OfficialSdkCompatibilityTest)`);
  }
  return value.split(',').map((s) => s.trim()).filter(Boolean);
}

/** Models that keep responses (previous_response_id reaches the provider) and those that do not. */
const PASS_THROUGH = list('GATEWAY_RESPONSES_PASS_MODELS');
const STATELESS = list('GATEWAY_RESPONSES_STATELESS_MODELS');
/** Of the stateless ones, those whose provider has no input token count (the gateway answers 400). */
const NO_INPUT_TOKENS = list('GATEWAY_RESPONSES_NO_COUNT_MODELS');

const openai = new OpenAI({ baseURL: OPENAI_BASE_URL, apiKey: GATEWAY_KEY, maxRetries: 0 });
const TOOL = { type: 'function', name: 'get_weather', description: 'Weather', parameters: WEATHER_TOOL_SCHEMA };
const ANSWER_SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' }, degrees: { type: 'integer' } },
  required: ['city', 'degrees'],
  additionalProperties: false,
};

function checkUsage(usage, what) {
  assert.ok(usage, `${what}: usage present`);
  assert.ok(usage.input_tokens > 0, `${what}: input_tokens`);
  assert.ok(usage.output_tokens > 0, `${what}: output_tokens`);
  assert.equal(usage.total_tokens, usage.input_tokens + usage.output_tokens, `${what}: total`);
  assert.equal(typeof usage.input_tokens_details.cached_tokens, 'number', `${what}: cached_tokens`);
  assert.equal(typeof usage.output_tokens_details.reasoning_tokens, 'number', `${what}: reasoning_tokens`);
}

for (const model of [...PASS_THROUGH, ...STATELESS]) {
  describe(`openai SDK responses on ${model}`, { timeout: TEST_TIMEOUT_MS }, () => {
    test('create_text_outputTextHelperAndUsage', async () => {
      const r = await openai.responses.create({
        model, instructions: 'Be brief.', input: 'Say hello to the gateway.', max_output_tokens: 24,
      });
      assert.equal(r.object, 'response');
      assert.match(r.id, /^resp_/);
      assert.ok(['completed', 'incomplete'].includes(r.status), r.status);
      const message = r.output.find((item) => item.type === 'message');
      assert.ok(message, 'a message item');
      assert.equal(message.role, 'assistant');
      const text = message.content.filter((p) => p.type === 'output_text').map((p) => p.text).join('');
      assert.ok(text.length > 0, 'the message has text');
      assert.equal(r.output_text, text, 'the output_text helper joins the output_text parts');
      if (r.status === 'incomplete') {
        assert.equal(r.incomplete_details.reason, 'max_output_tokens');
      }
      checkUsage(r.usage, 'create');
    });

    test('create_maxOutputTokensReached_isIncomplete', async () => {
      const r = await openai.responses.create({ model, input: 'Tell me a long story.', max_output_tokens: 16 },
        { headers: { 'x-sim-output-tokens': '40' } });
      assert.equal(r.status, 'incomplete');
      assert.equal(r.incomplete_details.reason, 'max_output_tokens');
      assert.equal(r.usage.output_tokens, 16);
    });

    test('stream_eventsInOrderWithIncreasingSequenceNumbers', async () => {
      const stream = openai.responses.stream({ model, input: 'Say hello to the gateway.', max_output_tokens: 64 });
      const events = [];
      let deltas = '';
      for await (const event of stream) {
        events.push(event);
        if (event.type === 'response.output_text.delta') {
          deltas += event.delta;
        }
      }
      const final = await stream.finalResponse();
      const types = events.map((e) => e.type);
      assert.equal(types[0], 'response.created');
      assert.equal(types[1], 'response.in_progress');
      assert.ok(['response.completed', 'response.incomplete'].includes(types[types.length - 1]), types.join());
      for (let i = 0; i < events.length; i++) {
        assert.equal(events[i].sequence_number, i, `sequence_number of event ${i} (${types[i]})`);
      }
      for (const t of ['response.output_item.added', 'response.content_part.added', 'response.output_text.done',
        'response.content_part.done', 'response.output_item.done']) {
        assert.ok(types.includes(t), `${t} in ${types.join()}`);
      }
      assert.ok(types.indexOf('response.output_item.added') < types.indexOf('response.output_text.delta'));
      assert.ok(types.lastIndexOf('response.output_text.delta') < types.indexOf('response.output_text.done'));
      const textDone = events.find((e) => e.type === 'response.output_text.done');
      assert.equal(textDone.text, deltas, 'output_text.done repeats the deltas');
      assert.ok(deltas.length > 0);
      assert.equal(final.output_text, deltas, 'finalResponse().output_text is the streamed text');
      checkUsage(final.usage, 'stream');
    });

    test('create_toolCallRoundTrip_functionCallThenOutput', async () => {
      const input = [{ role: 'user', content: 'What is the weather in Paris?' }];
      const first = await openai.responses.create({ model, input, tools: [TOOL], tool_choice: 'required' });
      const calls = first.output.filter((item) => item.type === 'function_call');
      assert.ok(calls.length >= 1, `a function_call item in ${JSON.stringify(first.output)}`);
      for (const call of calls) {
        assert.equal(call.name, 'get_weather');
        assert.ok(call.call_id.length > 0, 'call_id');
        assert.equal(typeof JSON.parse(call.arguments).city, 'string', 'arguments follow the schema');
      }
      input.push(...first.output.filter((item) => item.type !== 'message'));
      for (const call of calls) {
        input.push({ type: 'function_call_output', call_id: call.call_id, output: JSON.stringify({ degrees: 21 }) });
      }
      const second = await openai.responses.create({ model, input, tools: [TOOL] });
      assert.equal(second.output.filter((item) => item.type === 'function_call').length, 0, 'no further call');
      assert.ok(second.output_text.length > 0, 'an answer after the tool output');
    });

    test('stream_toolCall_argumentsDeltasAndDone', async () => {
      const stream = openai.responses.stream({
        model, input: 'What is the weather in Oslo?', tools: [TOOL], tool_choice: { type: 'function', name: 'get_weather' },
      });
      let deltas = '';
      const done = [];
      for await (const event of stream) {
        if (event.type === 'response.function_call_arguments.delta') {
          deltas += event.delta;
        } else if (event.type === 'response.function_call_arguments.done') {
          done.push(event);
        }
      }
      const final = await stream.finalResponse();
      const call = final.output.find((item) => item.type === 'function_call');
      assert.ok(call, 'a function_call item');
      assert.equal(done.length, 1);
      assert.equal(done[0].arguments, deltas, 'arguments.done repeats the deltas');
      assert.equal(call.arguments, deltas);
      assert.equal(typeof JSON.parse(call.arguments).city, 'string');
    });

    test('create_structuredOutput_jsonSchema', async () => {
      const r = await openai.responses.create({
        model, input: 'The weather in Rome, as JSON.',
        text: { format: { type: 'json_schema', name: 'weather', schema: ANSWER_SCHEMA, strict: true } },
      });
      const parsed = JSON.parse(r.output_text);
      assert.equal(typeof parsed.city, 'string');
      assert.ok(Number.isInteger(parsed.degrees), `degrees in ${r.output_text}`);
    });

    test('create_cachedTokens_reportedInInputTokensDetails', async () => {
      const plain = await openai.responses.create({ model, input: 'Say hello to the gateway.', max_output_tokens: 16 });
      const cached = await openai.responses.create({ model, input: 'Say hello to the gateway.', max_output_tokens: 16 },
        { headers: { 'x-sim-cached-tokens': '7' } });
      assert.equal(cached.usage.input_tokens_details.cached_tokens, 7);
      assert.equal(cached.usage.input_tokens, plain.usage.input_tokens + 7, 'input_tokens includes the cache reads');
    });
  });
}

for (const model of PASS_THROUGH) {
  test(`previousResponseId_reachesTheProvider_${model}`, async () => {
    // The simulator behind the pass-through keeps no responses either: its own 400 proves the field went through.
    const e = await expectError(OpenAI.BadRequestError, () => openai.responses.create({
      model, input: 'Go on.', previous_response_id: 'resp_abc',
    }));
    assert.match(e.message, /not found/);
  });

  test(`inputTokens_countedByTheProvider_${model}`, async () => {
    const r = await openai.responses.inputTokens.count({ model, input: 'Count these words, please.' });
    assert.equal(r.object, 'response.input_tokens');
    assert.ok(r.input_tokens > 0);
  });
}

for (const model of STATELESS) {
  test(`previousResponseId_refusedWith400_${model}`, async () => {
    const e = await expectError(OpenAI.BadRequestError, () => openai.responses.create({
      model, input: 'Go on.', previous_response_id: 'resp_abc',
    }));
    assert.equal(e.status, 400);
    assert.equal(e.param, 'previous_response_id');
    assert.match(e.message, /keeps no responses/);
  });
}

// Translated streams: a provider's error mid-stream ends the caller's stream with response.failed (GD-28), which the
// SDK's stream helper reads as the final, failed response (no exception, sequence numbers unbroken).
for (const model of NO_INPUT_TOKENS) {
  test(`stream_providerErrorMidStream_endsWithResponseFailed_${model}`, async () => {
    const stream = openai.responses.stream({ model, input: 'Say hello to the gateway.', max_output_tokens: 64 },
      { headers: { 'x-sim-fault': 'error_after=2' } });
    const events = [];
    for await (const event of stream) {
      events.push(event);
    }
    const last = events[events.length - 1];
    assert.equal(last.type, 'response.failed');
    events.forEach((e, i) => assert.equal(e.sequence_number, i, `sequence_number of ${e.type}`));
    const final = await stream.finalResponse();
    assert.equal(final.status, 'failed');
    assert.equal(final.error.code, 'server_error');
    assert.ok(final.output_text.length > 0, 'the text delivered before the error is kept');
  });
}

for (const model of NO_INPUT_TOKENS) {
  test(`inputTokens_refusedWith400_${model}`, async () => {
    const e = await expectError(OpenAI.BadRequestError, () => openai.responses.inputTokens.count({
      model, input: 'Count these words, please.',
    }));
    assert.equal(e.code, 'unsupported_model');
  });
}
