// Shared by the SDK compatibility tests: where the gateway is, which models to use, and a fetch
// wrapper that records what an SDK really put on the wire. OfficialSdkCompatibilityTest (Java) sets
// the variables; running `node --test` by hand needs them too.
import assert from 'node:assert/strict';

function required(name) {
  const value = process.env[name];
  if (!value) {
    // Fail loudly: an unset variable must never turn into a silently empty run.
    throw new Error(`environment variable ${name} is not set (run through OfficialSdkCompatibilityTest)`);
  }
  return value;
}

function list(name) {
  return required(name).split(',').map((s) => s.trim()).filter(Boolean);
}

/** e.g. http://127.0.0.1:8080 (no trailing slash). */
export const GATEWAY_URL = required('GATEWAY_URL').replace(/\/+$/, '');
export const GATEWAY_KEY = required('GATEWAY_KEY');
/** Base URL for the OpenAI SDK: it appends /chat/completions, /embeddings, /models. */
export const OPENAI_BASE_URL = `${GATEWAY_URL}/api/v1`;
/** Base URL for the Anthropic SDKs: they append /v1/messages. */
export const ANTHROPIC_BASE_URL = `${GATEWAY_URL}/api`;

/** Chat models for the OpenAI SDK (in-process simulator first, then the standalone one via an openai provider). */
export const CHAT_MODELS = list('GATEWAY_CHAT_MODELS');
/** Embedding models, same order. */
export const EMBED_MODELS = list('GATEWAY_EMBED_MODELS');
/** Models for the Anthropic SDKs (in-process simulator, then standalone via an anthropic provider). */
export const MESSAGES_MODELS = list('GATEWAY_MESSAGES_MODELS');

/** Per-test bound, so a hanging stream fails the test instead of the whole run. */
export const TEST_TIMEOUT_MS = 30_000;

/** Request ids are `req_` + 24 base62 characters (contract 1.4). */
export const REQUEST_ID = /^req_[A-Za-z0-9]{24}$/;

export const WEATHER_TOOL_SCHEMA = {
  type: 'object',
  properties: {
    city: { type: 'string', description: 'City name' },
    unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
  },
  required: ['city'],
};

/**
 * A fetch that records each exchange: the request (url, method, headers, parsed JSON body), the
 * response status and headers, and with captureBody the response text. captureBody reads the whole
 * body and hands the SDK an identical copy, so use it only on non-stream calls. (A response.clone()
 * would tee the body, and the SDK's cancel of an unread retried body would then wait forever.)
 */
export function recordingFetch({ captureBody = false } = {}) {
  const exchanges = [];
  const fetchImpl = async (input, init = {}) => {
    // The SDKs send JSON bodies as strings; anything else is recorded as absent.
    const bodyText = typeof init.body === 'string' ? init.body : null;
    const entry = {
      url: String(input?.url ?? input),
      method: init.method ?? 'GET',
      headers: Object.fromEntries(new Headers(init.headers).entries()),
      body: bodyText ? JSON.parse(bodyText) : null,
    };
    exchanges.push(entry);
    const response = await fetch(input, init);
    entry.status = response.status;
    entry.responseHeaders = Object.fromEntries(response.headers.entries());
    if (!captureBody) {
      return response;
    }
    entry.responseText = await response.text();
    return new Response(entry.responseText, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
  return { fetch: fetchImpl, exchanges, last: () => exchanges[exchanges.length - 1] };
}

/** Runs fn, which must reject with an instance of errorClass; returns the error for further checks. */
export async function expectError(errorClass, fn) {
  let caught;
  try {
    await fn();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught, `expected ${errorClass.name} but the call succeeded`);
  assert.ok(
    caught instanceof errorClass,
    `expected ${errorClass.name}, got ${caught?.constructor?.name} (status ${caught?.status}): ${caught?.message}`,
  );
  return caught;
}

/** Float32 precision check for two embedding vectors. */
export function assertSameVector(actual, expected, what) {
  assert.equal(actual.length, expected.length, `${what}: length`);
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i];
    const e = expected[i];
    assert.equal(typeof a, 'number', `${what}[${i}] is a number`);
    const tolerance = 1e-6 * Math.max(1, Math.abs(e));
    if (!(Math.abs(Math.fround(a) - Math.fround(e)) <= tolerance)) {
      assert.fail(`${what}[${i}]: ${a} vs ${e} differ beyond float32 precision`);
    }
  }
}
