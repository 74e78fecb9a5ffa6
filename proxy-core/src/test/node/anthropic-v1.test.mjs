// @anthropic-ai/sdk 1.x (installed under the alias anthropic-sdk-1), unmodified: `apiKey` travels
// as `Authorization: Bearer` and the version header is a 2026 date (contract 2.1 GD-2, 5.11).
// Its beta namespace calls plain /v1/messages (no ?beta=true).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from 'anthropic-sdk-1';
import { defineMessagesSuite } from './messages-suite.mjs';
import { recordingFetch } from './gateway-env.mjs';

defineMessagesSuite({
  label: '@anthropic-ai/sdk 1.x',
  Anthropic,
  credentials: (key) => ({ apiKey: key }),
  checkHeaders: (headers) => {
    assert.match(headers['anthropic-version'], /^2026-\d\d-\d\d$/);
    assert.match(headers.authorization, /^Bearer /);
    assert.equal(headers['x-api-key'], undefined, 'the 1.x client sends no x-api-key');
  },
  betaQuery: false,
  extraTests: (model, client) => {
    test('create_systemRoleMessage_isAccepted', async () => {
      const recorder = recordingFetch();
      const message = await client({ fetch: recorder.fetch }).messages.create({
        model,
        max_tokens: 128,
        messages: [
          { role: 'system', content: 'Answer briefly.' },
          { role: 'user', content: 'Hello?' },
        ],
      });
      assert.equal(recorder.last().body.messages[0].role, 'system');
      assert.equal(message.stop_reason, 'end_turn');
      assert.ok(message.content[0].text.length > 0);
    });
  },
});
