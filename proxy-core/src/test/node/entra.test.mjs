// The fake Microsoft Entra ID of the Java suite (EntraFake) checked by Microsoft's own client: @azure/identity's
// ClientSecretCredential (MSAL for Node underneath), its authority host pointed at the fake's HTTPS listener, reads
// the tenant's OpenID configuration, runs the client-credentials grant and reads the token answer and Entra's
// refusals; the openai SDK's AzureOpenAI client then calls the fake Azure OpenAI resource (AzureOpenAiFake) with
// that token. Nothing of the gateway runs here. EntraFakeTest (Java) starts the fakes and sets the variables.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ClientSecretCredential, getBearerTokenProvider } from '@azure/identity';
import { AzureOpenAI } from 'openai';
import { TEST_TIMEOUT_MS, recordingFetch } from './gateway-env.mjs';

function required(name) {
  const value = process.env[name];
  if (!value) {
    throw new Error(`environment variable ${name} is not set (run through EntraFakeTest)`);
  }
  return value;
}

const AUTHORITY_HOST = required('ENTRA_FAKE_AUTHORITY_HOST');
const TENANT_ID = required('ENTRA_FAKE_TENANT_ID');
const CLIENT_ID = required('ENTRA_FAKE_CLIENT_ID');
const CLIENT_SECRET = required('ENTRA_FAKE_CLIENT_SECRET');
const AZURE_ENDPOINT = required('AZURE_FAKE_ENDPOINT');
const CHAT_DEPLOYMENT = required('AZURE_FAKE_CHAT_DEPLOYMENT');
const SCOPE = 'https://cognitiveservices.azure.com/.default';

function credential({ tenant = TENANT_ID, secret = CLIENT_SECRET } = {}) {
  // disableInstanceDiscovery: the fake is the authority (as for a private or sovereign cloud); without it MSAL
  // would first ask login.microsoftonline.com whether the host is a known cloud.
  return new ClientSecretCredential(tenant, CLIENT_ID, secret, { authorityHost: AUTHORITY_HOST, disableInstanceDiscovery: true });
}

function claims(jwt) {
  const parts = jwt.split('.');
  assert.equal(parts.length, 3, 'a JWT in shape');
  return JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
}

/** getToken's rejection: @azure/identity wraps MSAL's ServerError, whose errorCode is Entra's OAuth error. */
async function refusal(promise) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  assert.fail('the grant was not refused');
}

describe('the fake Entra ID, as @azure/identity sees it', { timeout: TEST_TIMEOUT_MS }, () => {
  test('clientSecretCredential_getToken_isABearerTokenForAzureOpenAiWithItsLifetime', async () => {
    const before = Date.now();
    const token = await credential().getToken(SCOPE);
    assert.equal(token.tokenType, 'Bearer');
    const c = claims(token.token);
    assert.equal(c.aud, 'https://cognitiveservices.azure.com');
    assert.equal(c.appid, CLIENT_ID);
    assert.equal(c.tid, TENANT_ID);
    // expires_in 3599 read as seconds from the request.
    assert.ok(token.expiresOnTimestamp >= before + 3590_000 && token.expiresOnTimestamp <= Date.now() + 3600_000,
      `expiresOnTimestamp ${token.expiresOnTimestamp} is not about an hour ahead`);
  });

  test('sameCredential_secondGetToken_isServedFromMsalsCache', async () => {
    const cred = credential();
    const first = await cred.getToken(SCOPE);
    const second = await cred.getToken(SCOPE);
    assert.equal(second.token, first.token);
  });

  test('tokenProvider_azureOpenAiClientCallsTheFakeResource_withTheToken', async () => {
    const rec = recordingFetch();
    const provider = getBearerTokenProvider(credential(), SCOPE);
    const azure = new AzureOpenAI({ endpoint: AZURE_ENDPOINT, apiVersion: '2024-10-21', azureADTokenProvider: provider, maxRetries: 0, fetch: rec.fetch });
    const c = await azure.chat.completions.create({ model: CHAT_DEPLOYMENT, messages: [{ role: 'user', content: 'Hello' }] });
    assert.match(rec.last().headers.authorization, /^Bearer ey[\w-]+\.ey[\w-]+\.[\w-]+$/);
    assert.equal(claims(rec.last().headers.authorization.slice(7)).aud, 'https://cognitiveservices.azure.com');
    assert.equal(c.choices[0].message.content, `Hello from Azure deployment ${CHAT_DEPLOYMENT}.`);
  });

  test('wrongSecret_isInvalidClient_AADSTS7000215', async () => {
    const e = await refusal(credential({ secret: 'not-the-secret~0123456789' }).getToken(SCOPE));
    assert.match(e.message, /AADSTS7000215/);
    assert.equal(e.cause?.errorCode, 'invalid_client');
  });

  test('unknownTenant_itsMetadataIsRefused_soTheCredentialIsUnavailable', async () => {
    // Entra answers an unknown tenant's OpenID configuration with 400 invalid_tenant (AADSTS90002); MSAL asks for it
    // before any grant and reports that it could not resolve the tenant's endpoints.
    const e = await refusal(credential({ tenant: '00000000-1111-2222-3333-444444444444' }).getToken(SCOPE));
    assert.equal(e.name, 'CredentialUnavailableError');
    assert.match(e.message, /endpoints_resolution_error/);
  });

  test('scopeWithoutDotDefault_isInvalidScope_AADSTS1002012', async () => {
    // MSAL passes a scope as given; Entra's client-credentials flow takes only a resource's /.default.
    const e = await refusal(credential().getToken('https://cognitiveservices.azure.com/user_impersonation'));
    assert.match(e.message, /AADSTS1002012/);
    assert.equal(e.cause?.errorCode, 'invalid_scope');
  });
});
