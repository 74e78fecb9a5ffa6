// The fake Amazon Bedrock's Converse and ConverseStream checked by AWS's own code, never the gateway's: the AWS SDK
// for JavaScript v3 (@aws-sdk/client-bedrock-runtime, unmodified) signs and serializes the requests, which the fake
// must accept (it recomputes each signature with the AWS SDK for Java's signer), and parses the fake's answers and
// event streams with its own Converse model, so a field the fake misnames comes back missing here. Covers what the
// gateway relies on (GD-32): reasoningContent (text, signature, redactedContent) both ways, Nova 2's reasoningConfig,
// additionalModelResponseFieldPaths / additionalModelResponseFields for the matched stop sequence, tool use, usage,
// and Bedrock's ValidationException. Run by OfficialSdkCompatibilityTest with the fake's address and credentials.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BedrockRuntimeClient,
  ConverseCommand,
  ConverseStreamCommand,
  ValidationException,
} from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';

function required(name) {
  const value = process.env[name];
  if (!value) {
    throw new Error(`environment variable ${name} is not set (run through OfficialSdkCompatibilityTest)`);
  }
  return value;
}

const client = new BedrockRuntimeClient({
  region: required('BEDROCK_REGION'),
  endpoint: required('BEDROCK_URL'),
  credentials: { accessKeyId: required('BEDROCK_ACCESS_KEY_ID'), secretAccessKey: required('BEDROCK_SECRET_ACCESS_KEY') },
  // The fake speaks HTTP/1.1; the client's default handler is HTTP/2 (for its bidirectional operation).
  requestHandler: new NodeHttpHandler(),
  maxAttempts: 1,
});
const NOVA = 'us.amazon.nova-2-sim-v1:0';
const LLAMA = 'meta.llama-sim-1-v1:0';
const REASONING = { reasoningConfig: { type: 'enabled', maxReasoningEffort: 'low' } };
const ask = (text) => [{ role: 'user', content: [{ text }] }];

describe('AWS SDK Converse against the fake Bedrock', { timeout: 30_000 }, () => {
  test('converse_reasoningContentWithSignature_thenText', async () => {
    const r = await client.send(new ConverseCommand({
      modelId: NOVA,
      messages: ask('Think, then answer: what is 2 + 2?'),
      inferenceConfig: { maxTokens: 2048 },
      additionalModelRequestFields: REASONING,
    }));
    const content = r.output.message.content;
    assert.equal(r.output.message.role, 'assistant');
    assert.ok(content[0].reasoningContent?.reasoningText?.text.length > 0, JSON.stringify(content[0]));
    assert.ok(content[0].reasoningContent.reasoningText.signature.length > 0);
    assert.ok(content.some((b) => typeof b.text === 'string' && b.text.length > 0));
    assert.equal(r.stopReason, 'end_turn');
    assert.ok(r.usage.inputTokens > 0 && r.usage.outputTokens > 0);
    assert.equal(r.usage.totalTokens, r.usage.inputTokens + r.usage.outputTokens);
  });

  test('converse_stopSequence_namedInAdditionalModelResponseFields', async () => {
    const params = { modelId: LLAMA, messages: ask('Many words, please.'), inferenceConfig: { maxTokens: 64 } };
    const free = (await client.send(new ConverseCommand(params))).output.message.content[0].text;
    const words = free.split(' ');
    assert.ok(words.length >= 4, free);
    const stop = ` ${words[2]}`;
    const r = await client.send(new ConverseCommand({
      ...params,
      inferenceConfig: { maxTokens: 64, stopSequences: [stop] },
      additionalModelResponseFieldPaths: ['/stop_sequence'],
    }));
    assert.equal(r.stopReason, 'stop_sequence');
    assert.deepEqual(r.additionalModelResponseFields, { stop_sequence: stop });
    assert.equal(r.output.message.content[0].text, free.slice(0, free.indexOf(stop)));
  });

  test('converseStream_reasoningDeltasSignatureStopAndMetadata', async () => {
    const r = await client.send(new ConverseStreamCommand({
      modelId: NOVA,
      messages: ask('Think, then answer: what is 3 + 4?'),
      inferenceConfig: { maxTokens: 2048 },
      additionalModelRequestFields: REASONING,
    }));
    let reasoning = '';
    const signatures = [];
    let text = '';
    const kinds = [];
    let stop;
    let usage;
    for await (const event of r.stream) {
      const kind = Object.keys(event).find((k) => event[k] !== undefined);
      kinds.push(kind);
      const delta = event.contentBlockDelta?.delta;
      if (delta?.reasoningContent?.text !== undefined) reasoning += delta.reasoningContent.text;
      if (delta?.reasoningContent?.signature !== undefined) signatures.push(delta.reasoningContent.signature);
      if (delta?.text !== undefined) text += delta.text;
      if (event.messageStop) stop = event.messageStop.stopReason;
      if (event.metadata) usage = event.metadata.usage;
    }
    assert.equal(kinds[0], 'messageStart');
    assert.equal(kinds[kinds.length - 1], 'metadata');
    assert.ok(reasoning.length > 0);
    assert.equal(signatures.length, 1);
    assert.ok(text.length > 0);
    assert.equal(stop, 'end_turn');
    assert.ok(usage.inputTokens > 0 && usage.outputTokens > 0);
  });

  test('converse_reasoningSentBackWithToolResult_answersWithText', async () => {
    const toolConfig = {
      tools: [{ toolSpec: { name: 'get_weather', description: 'Weather', inputSchema: { json: {
        type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } } }],
    };
    const messages = ask('Should I take an umbrella in Bergen?');
    const first = await client.send(new ConverseCommand({
      modelId: NOVA, messages, toolConfig, inferenceConfig: { maxTokens: 4096 }, additionalModelRequestFields: REASONING,
    }));
    assert.equal(first.stopReason, 'tool_use');
    const turn = first.output.message.content;
    assert.ok(turn[0].reasoningContent?.reasoningText?.signature, JSON.stringify(turn[0]));
    const use = turn.find((b) => b.toolUse)?.toolUse;
    assert.equal(use.name, 'get_weather');
    assert.equal(typeof use.input.city, 'string');
    messages.push({ role: 'assistant', content: turn });
    messages.push({ role: 'user', content: [{ toolResult: { toolUseId: use.toolUseId, content: [{ text: 'rain' }] } }] });
    const answer = await client.send(new ConverseCommand({
      modelId: NOVA, messages, toolConfig, inferenceConfig: { maxTokens: 4096 }, additionalModelRequestFields: REASONING,
    }));
    assert.equal(answer.stopReason, 'end_turn');
    assert.ok(answer.output.message.content.some((b) => typeof b.text === 'string' && b.text.length > 0));
  });

  test('converse_redactedReasoningSentBack_isAccepted', async () => {
    const r = await client.send(new ConverseCommand({
      modelId: NOVA,
      messages: [
        { role: 'user', content: [{ text: 'first' }] },
        { role: 'assistant', content: [
          { reasoningContent: { redactedContent: new TextEncoder().encode('opaque') } }, { text: 'ok' }] },
        { role: 'user', content: [{ text: 'second' }] },
      ],
      inferenceConfig: { maxTokens: 64 },
    }));
    assert.ok(r.output.message.content[0].text.length > 0);
  });

  test('converse_reasoningConfigOnAModelWithoutIt_isValidationException', async () => {
    await assert.rejects(() => client.send(new ConverseCommand({
      modelId: LLAMA, messages: ask('hi'), additionalModelRequestFields: REASONING,
    })), (err) => {
      assert.ok(err instanceof ValidationException, `${err.name}: ${err.message}`);
      assert.equal(err.$metadata.httpStatusCode, 400);
      assert.match(err.message, /reasoningConfig/);
      return true;
    });
  });
});
