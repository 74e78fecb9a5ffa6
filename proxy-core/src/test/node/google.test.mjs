// The official SDKs on models served by Google providers (issue 18): a `gemini` provider (Gemini API, API key)
// and a `vertex` provider (Vertex AI, service-account tokens), both answered by the in-process fake of Google's
// wire format that OfficialSdkCompatibilityTest starts (itself checked by Google's own SDK). The gateway
// translates to and from generateContent; the SDKs must not notice.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import {
  ANTHROPIC_BASE_URL,
  GATEWAY_KEY,
  OPENAI_BASE_URL,
  TEST_TIMEOUT_MS,
  WEATHER_TOOL_SCHEMA,
  assertSameVector,
} from './gateway-env.mjs';

const MODELS = (process.env.GATEWAY_GOOGLE_MODELS ?? '').split(',').map((s) => s.trim()).filter(Boolean);
if (MODELS.length === 0) {
  throw new Error('GATEWAY_GOOGLE_MODELS must be set (run through OfficialSdkCompatibilityTest)');
}

const openai = new OpenAI({ baseURL: OPENAI_BASE_URL, apiKey: GATEWAY_KEY, maxRetries: 0 });
const anthropic = new Anthropic({ baseURL: ANTHROPIC_BASE_URL, apiKey: GATEWAY_KEY, maxRetries: 0 });
const CHAT_TOOL = { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: WEATHER_TOOL_SCHEMA } };
const MESSAGES_TOOL = { name: 'get_weather', description: 'Weather', input_schema: WEATHER_TOOL_SCHEMA };
const HELLO = 'Say hello to the gateway.';
// The fake answers "Gemini says: " + the last user text, with 21 input tokens (8 read from the cache) and
// 7 candidate + 5 thought tokens of output.
const ANSWER = `Gemini says: ${HELLO}`;

for (const model of MODELS) {
  describe(`openai SDK on ${model}`, { timeout: TEST_TIMEOUT_MS }, () => {
    test('create_returnsTheAnswerAndUsageByType', async () => {
      const c = await openai.chat.completions.create({
        model, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: HELLO }],
      });
      assert.equal(c.object, 'chat.completion');
      assert.match(c.id, /^chatcmpl-/);
      assert.equal(c.choices[0].message.role, 'assistant');
      assert.equal(c.choices[0].message.content, ANSWER);
      assert.equal(c.choices[0].finish_reason, 'stop');
      assert.equal(c.usage.prompt_tokens, 21);
      assert.equal(c.usage.prompt_tokens_details.cached_tokens, 8);
      assert.equal(c.usage.completion_tokens, 12);
      assert.equal(c.usage.completion_tokens_details.reasoning_tokens, 5);
      assert.equal(c.usage.total_tokens, 33);
    });

    test('stream_contentConcatenatesAndUsageChunkComesLast', async () => {
      const stream = await openai.chat.completions.create({
        model, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: HELLO }],
      });
      let text = '';
      let finish = null;
      let usage = null;
      for await (const chunk of stream) {
        if (chunk.choices.length === 0) {
          usage = chunk.usage;
          continue;
        }
        text += chunk.choices[0].delta.content ?? '';
        finish = chunk.choices[0].finish_reason ?? finish;
      }
      assert.equal(text, ANSWER);
      assert.equal(finish, 'stop');
      assert.equal(usage.completion_tokens, 12);
    });

    test('tools_functionCallBecomesToolCalls', async () => {
      const c = await openai.chat.completions.create({
        model, tools: [CHAT_TOOL], messages: [{ role: 'user', content: 'Weather in Paris?' }],
      });
      assert.equal(c.choices[0].finish_reason, 'tool_calls');
      const call = c.choices[0].message.tool_calls[0];
      assert.equal(call.type, 'function');
      assert.equal(call.function.name, 'get_weather');
      assert.deepEqual(JSON.parse(call.function.arguments), { city: 'Paris' });
      // The tool's result goes back as a functionResponse; the fake then answers with text.
      const next = await openai.chat.completions.create({
        model, tools: [CHAT_TOOL], messages: [
          { role: 'user', content: 'Weather in Paris?' },
          c.choices[0].message,
          { role: 'tool', tool_call_id: call.id, content: 'sunny' },
        ],
      });
      assert.equal(next.choices[0].finish_reason, 'stop');
      assert.match(next.choices[0].message.content, /^The tool said: .*sunny/);
    });
  });

  describe(`Anthropic SDK on ${model}`, { timeout: TEST_TIMEOUT_MS }, () => {
    test('create_returnsTextBlockAndUsage', async () => {
      const m = await anthropic.messages.create({
        model, max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user', content: HELLO }],
      });
      assert.equal(m.type, 'message');
      assert.equal(m.role, 'assistant');
      assert.equal(m.content[0].type, 'text');
      assert.equal(m.content[0].text, ANSWER);
      assert.equal(m.stop_reason, 'end_turn');
      assert.equal(m.usage.input_tokens, 13);
      assert.equal(m.usage.cache_read_input_tokens, 8);
      assert.equal(m.usage.output_tokens, 12);
    });

    test('stream_eventsAndFinalMessage', async () => {
      const stream = anthropic.messages.stream({
        model, max_tokens: 100, messages: [{ role: 'user', content: HELLO }],
      });
      const types = [];
      stream.on('streamEvent', (e) => types.push(e.type));
      const final = await stream.finalMessage();
      assert.equal(types[0], 'message_start');
      assert.equal(types.at(-1), 'message_stop');
      assert.equal(final.content[0].text, ANSWER);
      assert.equal(final.stop_reason, 'end_turn');
      assert.equal(final.usage.output_tokens, 12);
    });

    test('tools_functionCallBecomesToolUse', async () => {
      const m = await anthropic.messages.create({
        model, max_tokens: 100, tools: [MESSAGES_TOOL], messages: [{ role: 'user', content: 'Weather in Paris?' }],
      });
      assert.equal(m.stop_reason, 'tool_use');
      const use = m.content.find((b) => b.type === 'tool_use');
      assert.equal(use.name, 'get_weather');
      assert.deepEqual(use.input, { city: 'Paris' });
      const next = await anthropic.messages.create({
        model, max_tokens: 100, tools: [MESSAGES_TOOL], messages: [
          { role: 'user', content: 'Weather in Paris?' },
          { role: 'assistant', content: m.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny' }] },
        ],
      });
      assert.equal(next.stop_reason, 'end_turn');
      assert.match(next.content[0].text, /^The tool said: .*sunny/);
    });
  });
}

// Claude on Vertex AI (rawPredict / streamRawPredict): near pass-through for the Anthropic SDK, translated for openai.
const CLAUDE_MODEL = process.env.GATEWAY_VERTEX_CLAUDE_MODEL;
if (!CLAUDE_MODEL) {
  throw new Error('GATEWAY_VERTEX_CLAUDE_MODEL must be set (run through OfficialSdkCompatibilityTest)');
}
const CLAUDE_ANSWER = `Claude on Vertex says: ${HELLO}`;

describe(`both SDKs on ${CLAUDE_MODEL} (Claude on Vertex AI)`, { timeout: TEST_TIMEOUT_MS }, () => {
  test('anthropic_create_and_stream', async () => {
    const m = await anthropic.messages.create({ model: CLAUDE_MODEL, max_tokens: 50, messages: [{ role: 'user', content: HELLO }] });
    assert.equal(m.content[0].text, CLAUDE_ANSWER);
    assert.equal(m.stop_reason, 'end_turn');
    assert.equal(m.usage.cache_read_input_tokens, 4);
    const stream = anthropic.messages.stream({ model: CLAUDE_MODEL, max_tokens: 50, messages: [{ role: 'user', content: HELLO }] });
    const final = await stream.finalMessage();
    assert.equal(final.content[0].text, CLAUDE_ANSWER);
    assert.equal(final.usage.output_tokens, 9);
  });

  test('openai_create_and_stream', async () => {
    const c = await openai.chat.completions.create({ model: CLAUDE_MODEL, messages: [{ role: 'user', content: HELLO }] });
    assert.equal(c.choices[0].message.content, CLAUDE_ANSWER);
    assert.equal(c.choices[0].finish_reason, 'stop');
    const stream = await openai.chat.completions.create({
      model: CLAUDE_MODEL, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: HELLO }],
    });
    let text = '';
    let usage = null;
    for await (const chunk of stream) {
      if (chunk.choices.length === 0) {
        usage = chunk.usage;
        continue;
      }
      text += chunk.choices[0].delta.content ?? '';
    }
    assert.equal(text, CLAUDE_ANSWER);
    assert.equal(usage.completion_tokens, 9);
  });
});

// Embeddings (GD-31): Vertex AI's :predict and the Gemini API's :batchEmbedContents behind the OpenAI SDK, which
// asks for base64 when the caller names no encoding and decodes it itself (contract 4.4).
const EMBED_MODELS = (process.env.GATEWAY_GOOGLE_EMBED_MODELS ?? '').split(',').map((s) => s.trim()).filter(Boolean);
if (EMBED_MODELS.length === 0) {
  throw new Error('GATEWAY_GOOGLE_EMBED_MODELS must be set (run through GoogleSdkTest)');
}
for (const model of EMBED_MODELS) {
  describe(`openai SDK embeddings on ${model}`, { timeout: TEST_TIMEOUT_MS }, () => {
    test('create_sdkDefaultBase64_decodesToTheFloatAnswer_inInputOrder', async () => {
      const inputs = ['first input', 'the second input', 'a third'];
      const b64 = await openai.embeddings.create({ model, input: inputs }); // the SDK sends encoding_format: base64
      const floats = await openai.embeddings.create({ model, input: inputs, encoding_format: 'float' });
      assert.equal(b64.object, 'list');
      assert.equal(b64.data.length, 3);
      for (let i = 0; i < 3; i++) {
        assert.equal(b64.data[i].index, i);
        assert.equal(b64.data[i].object, 'embedding');
        assert.ok(Array.isArray(b64.data[i].embedding) && b64.data[i].embedding.length > 0);
        assertSameVector(b64.data[i].embedding, floats.data[i].embedding, `input ${i}: base64 and float`);
      }
      // Each vector is the one its input gets alone: the order is the input's.
      const alone = await openai.embeddings.create({ model, input: inputs[1], encoding_format: 'float' });
      assert.deepEqual(alone.data[0].embedding, floats.data[1].embedding);
      assert.ok(b64.usage.prompt_tokens > 0);
      assert.equal(b64.usage.total_tokens, b64.usage.prompt_tokens);
    });

    test('create_dimensions_shortensTheVectors', async () => {
      const e = await openai.embeddings.create({ model, input: 'shorter please', dimensions: 5 });
      assert.equal(e.data[0].embedding.length, 5);
    });

    test('create_tokenIds_isBadRequestError', async () => {
      await assert.rejects(() => openai.embeddings.create({ model, input: [[15339, 1917]] }), (err) => {
        assert.ok(err instanceof OpenAI.BadRequestError, `${err.constructor.name}`);
        assert.equal(err.code, 'unsupported_value');
        assert.equal(err.param, 'input');
        return true;
      });
    });
  });
}
