// The official SDKs across API styles (contract 8): the openai SDK on a model served by a provider of
// type `anthropic`, and the Anthropic SDK on a model served by a provider of type `openai`. The gateway
// translates requests, answers, streams and errors; the SDKs must not notice.
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
  expectError,
} from './gateway-env.mjs';

const CHAT_MODEL = process.env.GATEWAY_CROSS_CHAT_MODEL;
const MESSAGES_MODEL = process.env.GATEWAY_CROSS_MESSAGES_MODEL;
if (!CHAT_MODEL || !MESSAGES_MODEL) {
  throw new Error('GATEWAY_CROSS_CHAT_MODEL and GATEWAY_CROSS_MESSAGES_MODEL must be set');
}

const openai = new OpenAI({ baseURL: OPENAI_BASE_URL, apiKey: GATEWAY_KEY, maxRetries: 0 });
const anthropic = new Anthropic({ baseURL: ANTHROPIC_BASE_URL, apiKey: GATEWAY_KEY, maxRetries: 0 });

const CHAT_TOOL = { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: WEATHER_TOOL_SCHEMA } };
const MESSAGES_TOOL = { name: 'get_weather', description: 'Weather', input_schema: WEATHER_TOOL_SCHEMA };
const HELLO = 'Say hello to the gateway.';

describe(`openai SDK on ${CHAT_MODEL} (anthropic provider)`, { timeout: TEST_TIMEOUT_MS }, () => {
  test('create_returnsAssistantTextAndUsage', async () => {
    const c = await openai.chat.completions.create({
      model: CHAT_MODEL, max_tokens: 12, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: HELLO }],
    });
    assert.equal(c.object, 'chat.completion');
    assert.match(c.id, /^chatcmpl-/);
    assert.equal(c.choices[0].message.role, 'assistant');
    assert.ok(c.choices[0].message.content.length > 0);
    assert.equal(c.choices[0].finish_reason, 'length');
    assert.equal(c.usage.completion_tokens, 12);
    assert.equal(c.usage.total_tokens, c.usage.prompt_tokens + c.usage.completion_tokens);
  });

  test('stream_contentConcatenatesAndUsageChunkComesLast', async () => {
    const stream = await openai.chat.completions.create({
      model: CHAT_MODEL, max_tokens: 20, stream: true, stream_options: { include_usage: true },
      messages: [{ role: 'user', content: HELLO }],
    });
    let text = '';
    let finish = null;
    let usage = null;
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      if (chunk.choices.length === 0) {
        usage = chunk.usage;
        continue;
      }
      text += chunk.choices[0].delta.content ?? '';
      finish = chunk.choices[0].finish_reason ?? finish;
    }
    assert.ok(chunks > 3);
    assert.ok(text.length > 0);
    assert.equal(finish, 'length');
    assert.equal(usage.completion_tokens, 20);
  });

  test('streamHelper_toolCall_finalChatCompletionHasParsedArguments', async () => {
    const runner = openai.chat.completions.stream({
      model: CHAT_MODEL, tools: [CHAT_TOOL], messages: [{ role: 'user', content: 'Weather in Oslo?' }],
    });
    const final = await runner.finalChatCompletion();
    const call = final.choices[0].message.tool_calls[0];
    assert.equal(final.choices[0].finish_reason, 'tool_calls');
    assert.equal(call.type, 'function');
    assert.equal(call.function.name, 'get_weather');
    assert.equal(typeof JSON.parse(call.function.arguments).city, 'string');
    assert.match(call.id, /^[A-Za-z0-9_-]+$/);
  });

  test('toolRoundTrip_resultGoesBack_answerIsText', async () => {
    const messages = [{ role: 'user', content: 'Weather in Oslo?' }];
    const first = await openai.chat.completions.create({ model: CHAT_MODEL, tools: [CHAT_TOOL], messages });
    const assistant = first.choices[0].message;
    assert.ok(assistant.tool_calls?.length > 0, 'a tool call first');
    messages.push(assistant);
    for (const call of assistant.tool_calls) {
      messages.push({ role: 'tool', tool_call_id: call.id, content: '12 °C, rain' });
    }
    const second = await openai.chat.completions.create({ model: CHAT_MODEL, tools: [CHAT_TOOL], messages });
    assert.equal(second.choices[0].finish_reason, 'stop');
    assert.ok(second.choices[0].message.content.length > 0);
    assert.equal(second.choices[0].message.tool_calls, undefined);
  });

  test('nAboveOne_isBadRequest', async () => {
    await expectError(OpenAI.BadRequestError, () => openai.chat.completions.create({
      model: CHAT_MODEL, n: 2, messages: [{ role: 'user', content: HELLO }],
    }));
  });

  test('upstreamOverloaded_isRetryableServerErrorInOpenAiShape', async () => {
    const e = await expectError(OpenAI.InternalServerError, () => openai.chat.completions.create(
      { model: CHAT_MODEL, messages: [{ role: 'user', content: HELLO }] },
      { headers: { 'x-sim-fault': 'status=529' } },
    ));
    assert.equal(e.status, 503);
  });

  test('midStreamUpstreamError_raisesApiError', async () => {
    const stream = await openai.chat.completions.create(
      { model: CHAT_MODEL, stream: true, messages: [{ role: 'user', content: HELLO }] },
      { headers: { 'x-sim-fault': 'error_after=2' } },
    );
    await expectError(OpenAI.APIError, async () => {
      for await (const _ of stream) { /* drain */ }
    });
  });
});

describe(`anthropic SDK on ${MESSAGES_MODEL} (openai provider)`, { timeout: TEST_TIMEOUT_MS }, () => {
  // The provider speaks OpenAI's style, which has no count_tokens: the gateway counts with o200k_base, and
  // OpenAI's API reference counts this conversation as 19 prompt tokens.
  test('countTokens_isCountedByTheGateway', async () => {
    const count = await anthropic.messages.countTokens({
      model: MESSAGES_MODEL, system: 'You are a helpful assistant.', messages: [{ role: 'user', content: 'Hello!' }],
    });
    assert.equal(count.input_tokens, 19);
  });

  // LangChain's ChatAnthropic reads the input count from message_start only (contract 8.9).
  test('modelsList_isInAnthropicsShape', async () => {
    const ids = [];
    for await (const model of anthropic.models.list()) {
      assert.equal(model.type, 'model');
      assert.ok(model.display_name);
      assert.ok(!Number.isNaN(Date.parse(model.created_at)), model.created_at);
      ids.push(model.id);
    }
    assert.ok(ids.includes(MESSAGES_MODEL), ids.join(','));
  });

  test('stream_messageStartReportsTheInputCount', async () => {
    const stream = anthropic.messages.stream({
      model: MESSAGES_MODEL, max_tokens: 10, system: 'You are a helpful assistant.',
      messages: [{ role: 'user', content: 'Hello!' }],
    });
    let startInput = null;
    for await (const event of stream) {
      if (event.type === 'message_start') {
        startInput = event.message.usage.input_tokens;
      }
    }
    assert.equal(startInput, 19);
    const final = await stream.finalMessage();
    assert.ok(final.usage.input_tokens > 0);
  });

  test('create_returnsTextBlockAndUsage', async () => {
    const m = await anthropic.messages.create({
      model: MESSAGES_MODEL, max_tokens: 10, system: 'Be brief.', messages: [{ role: 'user', content: HELLO }],
    });
    assert.equal(m.type, 'message');
    assert.match(m.id, /^msg_/);
    assert.equal(m.content[0].type, 'text');
    assert.equal(m.stop_reason, 'max_tokens');
    assert.equal(m.usage.output_tokens, 10);
  });

  test('stream_finalMessageMatchesEvents', async () => {
    const stream = anthropic.messages.stream({ model: MESSAGES_MODEL, max_tokens: 30, messages: [{ role: 'user', content: HELLO }] });
    let text = '';
    stream.on('text', (t) => (text += t));
    const final = await stream.finalMessage();
    assert.equal(final.content[0].type, 'text');
    assert.equal(final.content[0].text, text);
    assert.ok(final.usage.output_tokens > 0);
    assert.ok(final.usage.input_tokens > 0);
  });

  test('toolUseRoundTrip_resultGoesBack_answerIsText', async () => {
    const messages = [{ role: 'user', content: 'Weather in Oslo?' }];
    const first = await anthropic.messages.create({ model: MESSAGES_MODEL, max_tokens: 256, tools: [MESSAGES_TOOL], messages });
    assert.equal(first.stop_reason, 'tool_use');
    const uses = first.content.filter((b) => b.type === 'tool_use');
    assert.ok(uses.length > 0);
    assert.equal(typeof uses[0].input.city, 'string');
    messages.push({ role: 'assistant', content: first.content });
    messages.push({ role: 'user', content: uses.map((u) => ({ type: 'tool_result', tool_use_id: u.id, content: '12 °C' })) });
    const second = await anthropic.messages.create({ model: MESSAGES_MODEL, max_tokens: 256, tools: [MESSAGES_TOOL], messages });
    assert.equal(second.stop_reason, 'end_turn');
    assert.equal(second.content.at(-1).type, 'text');
  });

  test('streamToolUse_finalMessageHasParsedInput', async () => {
    const stream = anthropic.messages.stream({
      model: MESSAGES_MODEL, max_tokens: 256, tools: [MESSAGES_TOOL], messages: [{ role: 'user', content: 'Weather in Oslo?' }],
    });
    const final = await stream.finalMessage();
    const use = final.content.find((b) => b.type === 'tool_use');
    assert.ok(use, 'a tool_use block');
    assert.equal(typeof use.input.city, 'string');
    assert.equal(final.stop_reason, 'tool_use');
  });

  test('thinking_enabled_returnsThinkingBlockThenText', async () => {
    const m = await anthropic.messages.create({
      model: MESSAGES_MODEL, max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [{ role: 'user', content: HELLO }],
    });
    assert.equal(m.content[0].type, 'thinking');
    assert.ok(m.content[0].thinking.length > 0);
    assert.equal(typeof m.content[0].signature, 'string');
    assert.ok(m.content.some((b) => b.type === 'text'));
  });

  test('stream_thinking_accumulatesThinkingDeltas', async () => {
    const stream = anthropic.messages.stream({
      model: MESSAGES_MODEL, max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [{ role: 'user', content: HELLO }],
    });
    let thinking = '';
    stream.on('thinking', (t) => (thinking += t));
    const final = await stream.finalMessage();
    assert.equal(final.content[0].type, 'thinking');
    assert.equal(final.content[0].thinking, thinking);
  });

  test('upstreamUnavailable_isOverloaded529', async () => {
    const e = await expectError(Anthropic.APIError, () => anthropic.messages.create(
      { model: MESSAGES_MODEL, max_tokens: 10, messages: [{ role: 'user', content: HELLO }] },
      { headers: { 'x-sim-fault': 'status=503' } },
    ));
    assert.equal(e.status, 529);
    assert.equal(e.error?.error?.type, 'overloaded_error');
  });

  test('midStreamUpstreamError_raisesApiError', async () => {
    const stream = anthropic.messages.stream(
      { model: MESSAGES_MODEL, max_tokens: 50, messages: [{ role: 'user', content: HELLO }] },
      { headers: { 'x-sim-fault': 'error_after=2' } },
    );
    await expectError(Anthropic.APIError, () => stream.finalMessage());
  });
});
