// @anthropic-ai/sdk 0.x, unmodified: `apiKey` travels as x-api-key with anthropic-version
// 2023-06-01, and the beta namespace calls /v1/messages?beta=true (contract 1.1, 2.1).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { defineMessagesSuite } from './messages-suite.mjs';
import { expectError, recordingFetch } from './gateway-env.mjs';

defineMessagesSuite({
  label: '@anthropic-ai/sdk 0.x',
  Anthropic,
  credentials: (key) => ({ apiKey: key, authToken: null }),
  checkHeaders: (headers) => {
    assert.equal(headers['anthropic-version'], '2023-06-01');
    assert.ok(headers['x-api-key'], 'x-api-key sent');
    assert.equal(headers.authorization, undefined, 'no Authorization header with apiKey');
  },
  betaQuery: true,
  extraTests: (model, client) => {
    test('auth_apiKeyAndBearerDisagree_isAuthenticationError', async () => {
      await expectError(Anthropic.AuthenticationError, () =>
        client({ maxRetries: 0, defaultHeaders: { Authorization: 'Bearer sk-someone-else' } }).messages.create({
          model,
          max_tokens: 16,
          messages: [{ role: 'user', content: 'hi' }],
        }),
      );
    });

    test('create_systemRoleMessageWith20230601_isBadRequestError', async () => {
      await expectError(Anthropic.BadRequestError, () =>
        client({ maxRetries: 0 }).messages.create({
          model,
          max_tokens: 16,
          messages: [
            { role: 'system', content: 'Answer briefly.' },
            { role: 'user', content: 'hi' },
          ],
        }),
      );
    });

    test('create_withAuthTokenBearer_works', async () => {
      const recorder = recordingFetch();
      const bearer = client({ apiKey: null, authToken: process.env.GATEWAY_KEY, fetch: recorder.fetch });
      const message = await bearer.messages.create({
        model,
        max_tokens: 64,
        messages: [{ role: 'user', content: 'hello with a bearer token' }],
      });
      assert.equal(recorder.last().headers.authorization, `Bearer ${process.env.GATEWAY_KEY}`);
      assert.equal(recorder.last().headers['x-api-key'], undefined);
      assert.equal(message.type, 'message');
      assert.ok(message.content[0].text.length > 0);
    });
  },
});
