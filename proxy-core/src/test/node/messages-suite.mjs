// The Messages API checks shared by both Anthropic SDK generations (contract 1, 2, 5.10, 7).
// Each *.test.mjs file that calls defineMessagesSuite gets one describe() per messages model:
// the in-process simulator and the standalone simulator behind an `anthropic` provider.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ANTHROPIC_BASE_URL,
  GATEWAY_KEY,
  MESSAGES_MODELS,
  REQUEST_ID,
  TEST_TIMEOUT_MS,
  WEATHER_TOOL_SCHEMA,
  expectError,
  recordingFetch,
} from './gateway-env.mjs';

export const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'Current weather in a city',
  input_schema: WEATHER_TOOL_SCHEMA,
};

const TOOL_USE_ID = /^[A-Za-z0-9_-]+$/;
const USER_HELLO = [{ role: 'user', content: 'Say hello to the gateway.' }];

/**
 * @param {object} sdk
 * @param {string} sdk.label          names the describe blocks
 * @param {Function} sdk.Anthropic    the SDK's client class
 * @param {(options: object) => object} sdk.credentials  client options carrying the key the SDK's default way
 * @param {(headers: object) => void} sdk.checkHeaders  asserts the auth/version headers the SDK sent
 * @param {boolean} sdk.betaQuery     whether client.beta.messages adds ?beta=true to the path
 * @param {(model: string, client: Function) => void} [sdk.extraTests]  SDK-specific tests, inside the describe
 */
export function defineMessagesSuite(sdk) {
  const client = (options = {}) =>
    new sdk.Anthropic({ baseURL: ANTHROPIC_BASE_URL, timeout: 20_000, ...sdk.credentials(GATEWAY_KEY), ...options });

  for (const model of MESSAGES_MODELS) {
    describe(`${sdk.label} messages on ${model}`, { timeout: TEST_TIMEOUT_MS }, () => {
      test('create_returnsTextMessage', async () => {
        const recorder = recordingFetch();
        const { data: message, request_id } = await client({ fetch: recorder.fetch })
          .messages.create({ model, max_tokens: 256, messages: USER_HELLO })
          .withResponse();
        sdk.checkHeaders(recorder.last().headers);
        assert.match(request_id, REQUEST_ID);
        assert.equal(message._request_id, request_id);
        assert.equal(message.type, 'message');
        assert.equal(message.role, 'assistant');
        assert.match(message.id, /^msg_/);
        assert.equal(typeof message.model, 'string');
        assert.equal(message.stop_reason, 'end_turn');
        assert.equal(message.stop_sequence, null);
        assert.ok(message.content.length >= 1);
        assert.equal(message.content[0].type, 'text');
        assert.ok(message.content[0].text.length > 0);
        assert.ok(message.usage.input_tokens > 0);
        assert.ok(message.usage.output_tokens > 0);
      });

      test('create_maxTokens_stopsWithMaxTokens', async () => {
        const message = await client().messages.create({
          model,
          max_tokens: 3,
          messages: [{ role: 'user', content: 'Tell me a long story.' }],
        });
        assert.equal(message.stop_reason, 'max_tokens');
        assert.ok(message.usage.output_tokens <= 3, `output_tokens ${message.usage.output_tokens}`);
      });

      test('stream_finalMessage_matchesStreamedText', async () => {
        const recorder = recordingFetch();
        const stream = client({ fetch: recorder.fetch }).messages.stream({
          model,
          max_tokens: 256,
          messages: [{ role: 'user', content: 'Stream a short greeting.' }],
        });
        let streamed = '';
        const eventTypes = [];
        stream.on('text', (delta) => (streamed += delta));
        stream.on('streamEvent', (event) => eventTypes.push(event.type));
        const message = await stream.finalMessage();

        sdk.checkHeaders(recorder.last().headers);
        assert.equal(recorder.last().body.stream, true);
        const head = recorder.last().responseHeaders;
        assert.equal(head['content-type'], 'text/event-stream; charset=utf-8');
        assert.equal(head['cache-control'], 'no-cache');
        assert.equal(head['x-request-id'], head['request-id']);
        assert.match(stream.request_id, REQUEST_ID);
        assert.equal(eventTypes[0], 'message_start');
        assert.equal(eventTypes[eventTypes.length - 1], 'message_stop');
        assert.ok(eventTypes.includes('message_delta'));
        assert.match(message.id, /^msg_/);
        assert.equal(message.stop_reason, 'end_turn');
        assert.equal(message.content.length, 1);
        assert.equal(message.content[0].type, 'text');
        assert.ok(streamed.length > 0);
        assert.equal(message.content[0].text, streamed);
        assert.equal(await stream.finalText(), streamed);
        assert.ok(message.usage.output_tokens > 0);
      });

      test('stopSequences_matched_stopReasonAndSequenceReported', async () => {
        // The simulator's answer depends on the conversation only, so a word of the free answer
        // is sure to occur again when it becomes a stop sequence.
        const params = { model, max_tokens: 64, messages: [{ role: 'user', content: 'Many words, please.' }] };
        const free = (await client().messages.create(params)).content[0].text;
        const words = free.split(' ');
        assert.ok(words.length >= 4, `a long enough answer: ${free}`);
        const stop = ` ${words[2]}`;
        const expected = free.slice(0, free.indexOf(stop));

        const message = await client().messages.create({ ...params, stop_sequences: [stop] });
        assert.equal(message.stop_reason, 'stop_sequence');
        assert.equal(message.stop_sequence, stop);
        assert.equal(message.content[0].text, expected);
        const streamed = await client().messages.stream({ ...params, stop_sequences: [stop] }).finalMessage();
        assert.equal(streamed.stop_reason, 'stop_sequence');
        assert.equal(streamed.stop_sequence, stop);
        assert.equal(streamed.content[0].text, expected);
      });

      test('create_thinkingEnabled_returnsThinkingBlockWithSignature', async () => {
        const message = await client().messages.create({
          model,
          max_tokens: 2048,
          thinking: { type: 'enabled', budget_tokens: 1024 },
          messages: [{ role: 'user', content: 'Think, then answer: what is 2 + 2?' }],
        });
        assert.equal(message.content[0].type, 'thinking');
        assert.ok(message.content[0].thinking.length > 0, 'thinking text');
        assert.ok(message.content[0].signature.length > 0, 'signature');
        const text = message.content.find((b) => b.type === 'text');
        assert.ok(text && text.text.length > 0, 'a text block follows the thinking');
        assert.equal(message.stop_reason, 'end_turn');
      });

      test('stream_thinkingEnabled_accumulatesThinkingAndSignature', async () => {
        const stream = client().messages.stream({
          model,
          max_tokens: 2048,
          thinking: { type: 'enabled', budget_tokens: 1024 },
          messages: [{ role: 'user', content: 'Think, then answer: what is 3 + 4?' }],
        });
        let thinking = '';
        const signatures = [];
        stream.on('thinking', (delta) => (thinking += delta));
        stream.on('signature', (signature) => signatures.push(signature));
        const message = await stream.finalMessage();
        const block = message.content[0];
        assert.equal(block.type, 'thinking');
        assert.ok(thinking.length > 0);
        assert.equal(block.thinking, thinking);
        assert.equal(signatures.length, 1, 'exactly one signature_delta');
        assert.equal(block.signature, signatures[0]);
        assert.ok(block.signature.length > 0);
        assert.ok(message.content.some((b) => b.type === 'text' && b.text.length > 0));
      });

      test('streamToolUse_thenToolResult_answersWithText', async () => {
        const c = client();
        const messages = [{ role: 'user', content: 'What is the weather in Oslo?' }];
        const first = c.messages.stream({ model, max_tokens: 1024, tools: [WEATHER_TOOL], messages });
        let partialJson = '';
        first.on('inputJson', (delta) => (partialJson += delta));
        const toolTurn = await first.finalMessage();

        assert.equal(toolTurn.stop_reason, 'tool_use');
        const uses = toolTurn.content.filter((b) => b.type === 'tool_use');
        assert.ok(uses.length >= 1, 'a tool_use block');
        for (const use of uses) {
          assert.match(use.id, TOOL_USE_ID);
          assert.equal(use.name, 'get_weather');
          assert.equal(typeof use.input, 'object');
          assert.equal(typeof use.input.city, 'string', `required "city" in ${JSON.stringify(use.input)}`);
        }
        if (uses.length === 1) {
          assert.deepEqual(JSON.parse(partialJson), uses[0].input, 'input_json_delta fragments concatenate to the input');
        }

        messages.push({ role: 'assistant', content: toolTurn.content });
        messages.push({
          role: 'user',
          content: uses.map((use) => ({ type: 'tool_result', tool_use_id: use.id, content: '7 degrees and raining' })),
        });
        const answer = await c.messages.create({ model, max_tokens: 1024, tools: [WEATHER_TOOL], messages });
        assert.equal(answer.stop_reason, 'end_turn');
        assert.ok(answer.content.some((b) => b.type === 'text' && b.text.length > 0));
        assert.ok(!answer.content.some((b) => b.type === 'tool_use'), 'no further tool use');
      });

      test('thinkingToolUseRoundTrip_signaturePreserved_answersWithText', async () => {
        const c = client();
        const params = {
          model,
          max_tokens: 4096,
          thinking: { type: 'enabled', budget_tokens: 1024 },
          tools: [WEATHER_TOOL],
        };
        const messages = [{ role: 'user', content: 'Should I take an umbrella in Bergen?' }];
        const toolTurn = await c.messages.create({ ...params, messages });
        assert.equal(toolTurn.stop_reason, 'tool_use');
        assert.equal(toolTurn.content[0].type, 'thinking');
        assert.ok(toolTurn.content[0].signature.length > 0);
        const uses = toolTurn.content.filter((b) => b.type === 'tool_use');
        assert.ok(uses.length >= 1);

        // The thinking block goes back unchanged, signature included, as the API requires.
        messages.push({ role: 'assistant', content: toolTurn.content });
        messages.push({
          role: 'user',
          content: uses.map((use) => ({ type: 'tool_result', tool_use_id: use.id, content: [{ type: 'text', text: 'rain' }] })),
        });
        const stream = c.messages.stream({ ...params, messages });
        const answer = await stream.finalMessage();
        assert.equal(answer.stop_reason, 'end_turn');
        assert.ok(answer.content.some((b) => b.type === 'text' && b.text.length > 0));
      });

      test('betaMessages_createAndStream_work', async () => {
        const recorder = recordingFetch();
        const c = client({ fetch: recorder.fetch });
        const message = await c.beta.messages.create({
          model,
          max_tokens: 256,
          betas: ['token-efficient-tools-2025-02-19'],
          messages: USER_HELLO,
        });
        const sent = recorder.last();
        sdk.checkHeaders(sent.headers);
        assert.equal(sent.headers['anthropic-beta'], 'token-efficient-tools-2025-02-19');
        assert.equal(new URL(sent.url).search, sdk.betaQuery ? '?beta=true' : '');
        assert.equal(message.type, 'message');
        assert.equal(message.content[0].type, 'text');
        assert.ok(message.content[0].text.length > 0);

        const streamed = await c.beta.messages.stream({ model, max_tokens: 256, messages: USER_HELLO }).finalMessage();
        assert.equal(new URL(recorder.last().url).search, sdk.betaQuery ? '?beta=true' : '');
        assert.equal(streamed.stop_reason, 'end_turn');
        assert.ok(streamed.content[0].text.length > 0);
      });

      test('countTokens_andBetaCountTokens_answerInputTokens', async () => {
        const recorder = recordingFetch();
        const c = client({ fetch: recorder.fetch });
        const count = await c.messages.countTokens({
          model,
          system: 'You are a helpful assistant.',
          messages: [{ role: 'user', content: 'Hello!' }],
        });
        assert.equal(new URL(recorder.last().url).pathname, '/api/v1/messages/count_tokens');
        assert.equal(recorder.last().status, 200);
        assert.ok(Number.isInteger(count.input_tokens) && count.input_tokens > 0, JSON.stringify(count));

        const beta = await c.beta.messages.countTokens({
          model,
          betas: ['token-efficient-tools-2025-02-19'],
          messages: USER_HELLO,
        });
        const sent = recorder.last();
        assert.equal(new URL(sent.url).search, sdk.betaQuery ? '?beta=true' : '');
        // The SDK adds its own token-counting beta to the ones asked for; the gateway takes the list as sent.
        assert.ok(sent.headers['anthropic-beta'].split(',').includes('token-efficient-tools-2025-02-19'),
          sent.headers['anthropic-beta']);
        assert.equal(sent.status, 200);
        assert.ok(beta.input_tokens > 0);
      });

      test('errors_wrongKey_isAuthenticationError', async () => {
        const err = await expectError(sdk.Anthropic.AuthenticationError, () =>
          client({ ...sdk.credentials('sk-wrong'), maxRetries: 0 }).messages.create({
            model,
            max_tokens: 16,
            messages: USER_HELLO,
          }),
        );
        assert.equal(err.status, 401);
        assert.equal(err.error.type, 'error');
        assert.equal(err.error.error.type, 'authentication_error');
        assert.match(err.requestID, REQUEST_ID);
        assert.equal(err.error.request_id, err.requestID);
      });

      test('errors_wrongKeyOnStream_isAuthenticationError', async () => {
        const err = await expectError(sdk.Anthropic.AuthenticationError, () =>
          client({ ...sdk.credentials('sk-wrong'), maxRetries: 0 })
            .messages.stream({ model, max_tokens: 16, messages: USER_HELLO })
            .finalMessage(),
        );
        assert.equal(err.status, 401);
      });

      test('errors_unknownModel_isNotFoundError', async () => {
        const err = await expectError(sdk.Anthropic.NotFoundError, () =>
          client({ maxRetries: 0 }).messages.create({ model: 'no-such-model', max_tokens: 16, messages: USER_HELLO }),
        );
        assert.equal(err.status, 404);
        assert.equal(err.error.error.type, 'not_found_error');
      });

      test('errors_missingMaxTokens_isBadRequestError', async () => {
        const err = await expectError(sdk.Anthropic.BadRequestError, () =>
          client({ maxRetries: 0 }).messages.create({ model, messages: USER_HELLO }),
        );
        assert.equal(err.status, 400);
        assert.equal(err.error.error.type, 'invalid_request_error');
      });

      test('stream_errorEventMidStream_finalMessageRejectsWithApiError', async () => {
        const stream = client({ maxRetries: 0 }).messages.stream(
          { model, max_tokens: 64, messages: USER_HELLO },
          { headers: { 'x-sim-fault': 'error_after=2' } },
        );
        let text = '';
        stream.on('text', (delta) => (text += delta));
        const err = await expectError(sdk.Anthropic.APIError, () => stream.finalMessage());
        assert.ok(text.length > 0, 'some text arrived before the error');
        assert.equal(err.error?.type, 'error', `error event body: ${JSON.stringify(err.error)}`);
        assert.ok(err.error?.error?.type, 'error.type in the event');
      });

      test('stream_connectionCutMidStream_finalMessageRejects', async () => {
        const stream = client({ maxRetries: 0 }).messages.stream(
          { model, max_tokens: 64, messages: USER_HELLO },
          { headers: { 'x-sim-fault': 'cut_after=2' } },
        );
        await expectError(Error, () => stream.finalMessage());
      });

      test('upstream529_isOverloadedError', async () => {
        const err = await expectError(sdk.Anthropic.InternalServerError, () =>
          client({ maxRetries: 0 }).messages.create(
            { model, max_tokens: 16, messages: USER_HELLO },
            { headers: { 'x-sim-fault': 'status=529' } },
          ),
        );
        assert.equal(err.status, 529);
        assert.equal(err.error.error.type, 'overloaded_error');
        if (sdk.Anthropic.OverloadedError) {
          assert.ok(err instanceof sdk.Anthropic.OverloadedError, `${err.constructor.name} is an OverloadedError`);
        }
        assert.ok(err.headers.get('retry-after') !== null, 'Retry-After on 529');
        assert.ok(err.headers.get('retry-after-ms') !== null, 'retry-after-ms on 529');
      });

      test('upstream429_isRateLimitError_andSdkRetries', async () => {
        const recorder = recordingFetch();
        const err = await expectError(sdk.Anthropic.RateLimitError, () =>
          client({ maxRetries: 1, fetch: recorder.fetch }).messages.create(
            { model, max_tokens: 16, messages: USER_HELLO },
            { headers: { 'x-sim-fault': 'status=429,retry_after=0' } },
          ),
        );
        assert.equal(err.status, 429);
        assert.equal(err.error.error.type, 'rate_limit_error');
        assert.equal(recorder.exchanges.length, 2, 'the SDK retried a 429 once');
        assert.ok(err.headers.get('retry-after') !== null, 'Retry-After on 429');
        assert.ok(err.headers.get('retry-after-ms') !== null, 'retry-after-ms on 429');
      });

      test('errors_missingVersionHeader_isBadRequestError', async () => {
        const err = await expectError(sdk.Anthropic.BadRequestError, () =>
          client({ maxRetries: 0, defaultHeaders: { 'anthropic-version': null } }).messages.create({
            model,
            max_tokens: 16,
            messages: USER_HELLO,
          }),
        );
        assert.equal(err.error.error.type, 'invalid_request_error');
        assert.match(err.error.error.message, /anthropic-version/);
      });

      test('errors_versionBefore20230601_isBadRequestError', async () => {
        await expectError(sdk.Anthropic.BadRequestError, () =>
          client({ maxRetries: 0, defaultHeaders: { 'anthropic-version': '2023-01-01' } }).messages.create({
            model,
            max_tokens: 16,
            messages: USER_HELLO,
          }),
        );
      });

      sdk.extraTests?.(model, client);
    });
  }
}
