// Azure OpenAI behind the gateway. First the fake Azure endpoint of the Java suite (AzureOpenAiFake) is checked by
// the official openai SDK's own AzureOpenAI client, talking to it directly: the deployment paths with api-version,
// the api-key header, an Entra token, the v1 paths through the plain OpenAI client, content-filter results and
// Azure's errors are what that client expects. Then the OpenAI and Anthropic SDKs drive the gateway with that fake
// behind it (deployment form, v1 form, a static Entra token, an Entra ID application whose tokens the gateway obtains),
// streams included. AzureOpenAiSdkTest (Java) sets the variables.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { AzureOpenAI } from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import {
  ANTHROPIC_BASE_URL,
  GATEWAY_KEY,
  OPENAI_BASE_URL,
  TEST_TIMEOUT_MS,
  WEATHER_TOOL_SCHEMA,
  expectError,
  recordingFetch,
} from './gateway-env.mjs';

function required(name) {
  const value = process.env[name];
  if (!value) {
    throw new Error(`environment variable ${name} is not set (run through AzureOpenAiSdkTest)`);
  }
  return value;
}

const ENDPOINT = required('AZURE_FAKE_ENDPOINT');
const API_KEY = required('AZURE_FAKE_API_KEY');
const ENTRA_TOKEN = required('AZURE_FAKE_ENTRA_TOKEN');
const API_VERSION = required('AZURE_FAKE_API_VERSION');
const CHAT_DEPLOYMENT = required('AZURE_FAKE_CHAT_DEPLOYMENT');
const EMBED_DEPLOYMENT = required('AZURE_FAKE_EMBED_DEPLOYMENT');
const CHAT_MODELS = required('GATEWAY_AZURE_CHAT_MODELS').split(',');
const MESSAGES_MODELS = required('GATEWAY_AZURE_MESSAGES_MODELS').split(',');
const EMBED_MODEL = required('GATEWAY_AZURE_EMBED_MODEL');

const HELLO = 'Say hello to the gateway.';
const ANSWER = `Hello from Azure deployment ${CHAT_DEPLOYMENT}.`;
const CHAT_TOOL = { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: WEATHER_TOOL_SCHEMA } };
const MESSAGES_TOOL = { name: 'get_weather', description: 'Weather', input_schema: WEATHER_TOOL_SCHEMA };

/** Reads a chat stream: the text, the finish reason, the usage chunk, the chunks without choices. */
async function readChatStream(stream) {
  let text = '';
  let finish = null;
  let usage = null;
  const empty = [];
  for await (const chunk of stream) {
    if (chunk.choices.length === 0) {
      empty.push(chunk);
      usage = chunk.usage ?? usage;
      continue;
    }
    text += chunk.choices[0].delta?.content ?? '';
    finish = chunk.choices[0].finish_reason ?? finish;
  }
  return { text, finish, usage, empty };
}

describe('the fake Azure endpoint, as the official AzureOpenAI client sees it', { timeout: TEST_TIMEOUT_MS }, () => {
  const azure = new AzureOpenAI({ endpoint: ENDPOINT, apiKey: API_KEY, apiVersion: API_VERSION, maxRetries: 0 });

  test('deploymentPath_create_answersWithContentFilterResults', async () => {
    const rec = recordingFetch();
    const client = new AzureOpenAI({ endpoint: ENDPOINT, apiKey: API_KEY, apiVersion: API_VERSION, maxRetries: 0, fetch: rec.fetch });
    const c = await client.chat.completions.create({ model: CHAT_DEPLOYMENT, messages: [{ role: 'user', content: HELLO }] });
    // What the SDK sent is what the fake insists on: the deployment in the path, api-version, api-key.
    assert.equal(rec.last().url, `${ENDPOINT}/openai/deployments/${CHAT_DEPLOYMENT}/chat/completions?api-version=${API_VERSION}`);
    assert.equal(rec.last().headers['api-key'], API_KEY);
    assert.equal(rec.last().headers.authorization, undefined);
    assert.equal(c.object, 'chat.completion');
    assert.equal(c.choices[0].message.content, ANSWER);
    assert.equal(c.choices[0].finish_reason, 'stop');
    assert.equal(c.choices[0].content_filter_results.violence.filtered, false);
    assert.equal(c.prompt_filter_results[0].content_filter_results.hate.severity, 'safe');
    assert.equal(c.usage.total_tokens, c.usage.prompt_tokens + c.usage.completion_tokens);
  });

  test('deploymentPath_stream_promptFilterChunkFirstThenTextThenUsage', async () => {
    const stream = await azure.chat.completions.create({
      model: CHAT_DEPLOYMENT, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: HELLO }],
    });
    const r = await readChatStream(stream);
    assert.equal(r.text, ANSWER);
    assert.equal(r.finish, 'stop');
    assert.equal(r.empty[0].id, '');
    assert.equal(r.empty[0].prompt_filter_results[0].prompt_index, 0);
    assert.equal(r.usage.completion_tokens, 5);
  });

  test('streamHelper_toolCall_hasParsedArguments', async () => {
    const final = await azure.chat.completions.stream({
      model: CHAT_DEPLOYMENT, tools: [CHAT_TOOL], messages: [{ role: 'user', content: 'Weather in Oslo?' }],
    }).finalChatCompletion();
    assert.equal(final.choices[0].finish_reason, 'tool_calls');
    assert.deepEqual(JSON.parse(final.choices[0].message.tool_calls[0].function.arguments), { city: 'Oslo' });
  });

  test('embeddings_base64AsTheSdkAsksIt_decodeToTheFloats', async () => {
    const floats = await azure.embeddings.create({ model: EMBED_DEPLOYMENT, input: ['a', 'b'], dimensions: 8, encoding_format: 'float' });
    const decoded = await azure.embeddings.create({ model: EMBED_DEPLOYMENT, input: ['a', 'b'], dimensions: 8 });
    assert.equal(floats.data.length, 2);
    assert.equal(floats.data[0].embedding.length, 8);
    assert.deepEqual(decoded.data.map((d) => d.embedding.map(Math.fround)), floats.data.map((d) => d.embedding.map(Math.fround)));
  });

  test('filteredPrompt_isBadRequestWithContentFilterCodeAndInnerError', async () => {
    const e = await expectError(OpenAI.BadRequestError, () => azure.chat.completions.create({
      model: CHAT_DEPLOYMENT, messages: [{ role: 'user', content: 'FILTER_PROMPT' }],
    }));
    assert.equal(e.status, 400);
    assert.equal(e.code, 'content_filter');
    assert.equal(e.param, 'prompt');
    assert.equal(e.error.innererror.code, 'ResponsibleAIPolicyViolation');
    assert.equal(e.error.innererror.content_filter_result.violence.filtered, true);
  });

  test('filteredCompletion_finishReasonContentFilter', async () => {
    const c = await azure.chat.completions.create({ model: CHAT_DEPLOYMENT, messages: [{ role: 'user', content: 'FILTER_COMPLETION' }] });
    assert.equal(c.choices[0].finish_reason, 'content_filter');
    assert.equal(c.choices[0].content_filter_results.violence.filtered, true);
  });

  test('wrongKey_isAuthenticationError_unknownDeployment_isNotFound', async () => {
    const wrong = new AzureOpenAI({ endpoint: ENDPOINT, apiKey: 'not-the-key', apiVersion: API_VERSION, maxRetries: 0 });
    const denied = await expectError(OpenAI.AuthenticationError, () => wrong.chat.completions.create({
      model: CHAT_DEPLOYMENT, messages: [{ role: 'user', content: HELLO }],
    }));
    assert.equal(denied.code, '401');
    const missing = await expectError(OpenAI.NotFoundError, () => azure.chat.completions.create({
      model: 'no-such-deployment', messages: [{ role: 'user', content: HELLO }],
    }));
    assert.equal(missing.code, 'DeploymentNotFound');
  });

  test('entraTokenProvider_sendsBearer_andIsAccepted', async () => {
    const rec = recordingFetch();
    const entra = new AzureOpenAI({
      endpoint: ENDPOINT, apiVersion: API_VERSION, azureADTokenProvider: async () => ENTRA_TOKEN, maxRetries: 0, fetch: rec.fetch,
    });
    const c = await entra.chat.completions.create({ model: CHAT_DEPLOYMENT, messages: [{ role: 'user', content: HELLO }] });
    assert.equal(rec.last().headers.authorization, `Bearer ${ENTRA_TOKEN}`);
    assert.equal(c.choices[0].message.content, ANSWER);
  });

  test('v1Path_plainOpenAiClient_keyAsBearer_deploymentInBody', async () => {
    const rec = recordingFetch();
    const v1 = new OpenAI({ baseURL: `${ENDPOINT}/openai/v1`, apiKey: API_KEY, maxRetries: 0, fetch: rec.fetch });
    const stream = await v1.chat.completions.create({ model: CHAT_DEPLOYMENT, stream: true, messages: [{ role: 'user', content: HELLO }] });
    const r = await readChatStream(stream);
    assert.equal(rec.last().url, `${ENDPOINT}/openai/v1/chat/completions`);
    assert.equal(r.text, ANSWER);
  });
});

const openai = new OpenAI({ baseURL: OPENAI_BASE_URL, apiKey: GATEWAY_KEY, maxRetries: 0 });
const anthropic = new Anthropic({ baseURL: ANTHROPIC_BASE_URL, apiKey: GATEWAY_KEY, maxRetries: 0 });

for (const model of CHAT_MODELS) {
  describe(`openai SDK through the gateway on ${model} (azure_openai)`, { timeout: TEST_TIMEOUT_MS }, () => {
    test('create_passesThroughWithContentFilterResults', async () => {
      const c = await openai.chat.completions.create({ model, messages: [{ role: 'user', content: HELLO }] });
      assert.equal(c.choices[0].message.content, ANSWER);
      assert.equal(c.model, 'gpt-4o-2024-11-20'); // the upstream's own model string (GD-17)
      assert.equal(c.choices[0].content_filter_results.sexual.filtered, false);
      assert.equal(c.prompt_filter_results[0].content_filter_results.violence.severity, 'safe');
      assert.equal(c.usage.completion_tokens, 5);
    });

    test('stream_withoutIncludeUsage_promptFilterChunkPassedUsageWithheld', async () => {
      const stream = await openai.chat.completions.create({ model, stream: true, messages: [{ role: 'user', content: HELLO }] });
      const r = await readChatStream(stream);
      assert.equal(r.text, ANSWER);
      assert.equal(r.finish, 'stop');
      assert.equal(r.empty.length, 1, 'only the prompt-filter chunk has no choices');
      assert.ok(r.empty[0].prompt_filter_results);
      assert.equal(r.usage, null);
    });

    test('stream_withIncludeUsage_usageChunkLast', async () => {
      const stream = await openai.chat.completions.create({
        model, stream: true, stream_options: { include_usage: true }, max_tokens: 3, messages: [{ role: 'user', content: HELLO }],
      });
      const r = await readChatStream(stream);
      assert.equal(r.text, 'Hello from Azure');
      assert.equal(r.finish, 'length');
      assert.equal(r.usage.completion_tokens, 3);
    });

    test('streamHelper_toolCall_finalChatCompletionHasParsedArguments', async () => {
      const final = await openai.chat.completions.stream({
        model, tools: [CHAT_TOOL], messages: [{ role: 'user', content: 'Weather in Oslo?' }],
      }).finalChatCompletion();
      assert.equal(final.choices[0].finish_reason, 'tool_calls');
      assert.deepEqual(JSON.parse(final.choices[0].message.tool_calls[0].function.arguments), { city: 'Oslo' });
    });

    test('filteredPrompt_isAzuresBadRequestAsSent', async () => {
      const e = await expectError(OpenAI.BadRequestError, () => openai.chat.completions.create({
        model, stream: true, messages: [{ role: 'user', content: 'FILTER_PROMPT please' }],
      }));
      assert.equal(e.code, 'content_filter');
      assert.equal(e.param, 'prompt');
      assert.equal(e.error.innererror.code, 'ResponsibleAIPolicyViolation');
      assert.match(e.message, /content management policy/);
    });

    test('filteredCompletion_streamEndsWithContentFilterFinish', async () => {
      const stream = await openai.chat.completions.create({ model, stream: true, messages: [{ role: 'user', content: 'FILTER_COMPLETION' }] });
      const r = await readChatStream(stream);
      assert.equal(r.text, 'Hello from');
      assert.equal(r.finish, 'content_filter');
    });
  });
}

describe(`openai SDK embeddings through the gateway on ${EMBED_MODEL} (azure_openai)`, { timeout: TEST_TIMEOUT_MS }, () => {
  test('floatAndBase64_sameVectors', async () => {
    const floats = await openai.embeddings.create({ model: EMBED_MODEL, input: ['first', 'second'], dimensions: 8, encoding_format: 'float' });
    const decoded = await openai.embeddings.create({ model: EMBED_MODEL, input: ['first', 'second'], dimensions: 8 });
    assert.equal(floats.data.length, 2);
    assert.equal(floats.model, 'text-embedding-3-small');
    assert.deepEqual(decoded.data.map((d) => d.embedding.map(Math.fround)), floats.data.map((d) => d.embedding.map(Math.fround)));
  });
});

for (const model of MESSAGES_MODELS) {
  describe(`Anthropic SDK through the gateway on ${model} (azure_openai, translated)`, { timeout: TEST_TIMEOUT_MS }, () => {
    test('create_textEndTurnAndUsage', async () => {
      const m = await anthropic.messages.create({ model, max_tokens: 64, messages: [{ role: 'user', content: HELLO }] });
      assert.equal(m.type, 'message');
      assert.equal(m.content[0].type, 'text');
      assert.equal(m.content[0].text, ANSWER);
      assert.equal(m.stop_reason, 'end_turn');
      assert.equal(m.usage.output_tokens, 5);
    });

    test('stream_finalMessageAndTextEvents', async () => {
      const stream = anthropic.messages.stream({ model, max_tokens: 64, messages: [{ role: 'user', content: HELLO }] });
      let text = '';
      stream.on('text', (t) => { text += t; });
      const final = await stream.finalMessage();
      assert.equal(text, ANSWER);
      assert.equal(final.content[0].text, ANSWER);
      assert.equal(final.stop_reason, 'end_turn');
      assert.equal(final.usage.output_tokens, 5);
    });

    test('stream_toolUse_inputParsed', async () => {
      const final = await anthropic.messages.stream({
        model, max_tokens: 64, tools: [MESSAGES_TOOL], messages: [{ role: 'user', content: 'Weather in Oslo?' }],
      }).finalMessage();
      assert.equal(final.stop_reason, 'tool_use');
      const use = final.content.find((b) => b.type === 'tool_use');
      assert.equal(use.name, 'get_weather');
      assert.deepEqual(use.input, { city: 'Oslo' });
    });

    test('filteredCompletion_isRefusal_wholeAndStreamed', async () => {
      const whole = await anthropic.messages.create({ model, max_tokens: 64, messages: [{ role: 'user', content: 'FILTER_COMPLETION' }] });
      assert.equal(whole.stop_reason, 'refusal');
      assert.deepEqual(whole.content, []);
      const streamed = await anthropic.messages.stream({ model, max_tokens: 64, messages: [{ role: 'user', content: 'FILTER_COMPLETION' }] }).finalMessage();
      assert.equal(streamed.stop_reason, 'refusal');
      assert.equal(streamed.content[0].text, 'Hello from');
    });

    test('countTokens_answeredByTheGateway', async () => {
      const c = await anthropic.messages.countTokens({ model, messages: [{ role: 'user', content: HELLO }] });
      assert.ok(Number.isInteger(c.input_tokens) && c.input_tokens > 0);
    });

    test('filteredPrompt_isInvalidRequestErrorNamingThePolicy', async () => {
      const e = await expectError(Anthropic.BadRequestError, () => anthropic.messages.create({
        model, max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'FILTER_PROMPT please' }],
      }));
      assert.equal(e.status, 400);
      assert.equal(e.error.error.type, 'invalid_request_error');
      assert.match(e.error.error.message, /content management policy/);
    });
  });
}
