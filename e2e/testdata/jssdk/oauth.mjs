// The official JS SDK (@a2a-js/sdk) against a kfa that accepts an OAuth
// provider's access tokens (e2e/oauth_sdk_test.go). The SDK's credential
// mechanism (an AuthenticationHandler behind
// createAuthenticatingFetchWithRetry) answers kfa's Bearer challenge the
// way an OAuth client finds its own way in: it follows the challenge's
// resource_metadata (RFC 9728) to the authorization server, reads its
// metadata, and gets a token there with client credentials. No header is
// set by hand and no URL of the provider is configured. The test gives
// KFA_URL (where kfa listens), KFA_PUBLIC_URL (the URL its documents
// name), and the client's KFA_CLIENT_ID and KFA_CLIENT_SECRET; it prints
// one line per check and exits non-zero on the first failure.
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
  createAuthenticatingFetchWithRetry,
} from '@a2a-js/sdk/client';
import { Role, TaskState } from '@a2a-js/sdk';

const base = process.env.KFA_URL;
const publicURL = process.env.KFA_PUBLIC_URL;

function check(ok, what, detail) {
  if (!ok) {
    console.error(`FAIL ${what}: ${typeof detail === 'string' ? detail : JSON.stringify(detail)}`);
    process.exit(1);
  }
  console.log(`ok ${what}`);
}

const rewrite = (url) => (String(url).startsWith(publicURL) ? base + String(url).slice(publicURL.length) : url);
const plainFetch = (url, init) => fetch(rewrite(url instanceof Request ? url.url : url), init);

// challengeParam reads one parameter of a Bearer challenge.
function challengeParam(challenge, name) {
  const m = new RegExp(`\\b${name}="([^"]*)"`).exec(challenge);
  return m ? m[1] : undefined;
}

// oauthHandler gets a client credentials token when kfa's challenge asks
// for a credential, from the authorization server the challenge's
// resource metadata names.
function oauthHandler(clientID, secret, scope) {
  let current = {};
  const handler = {
    retries: 0,
    tokenEndpoint: undefined,
    headers: async () => current,
    shouldRetryWithHeaders: async (_req, res) => {
      const challenge = res.headers.get('www-authenticate') ?? '';
      if (!/^Bearer\b/i.test(challenge) || /\berror=/.test(challenge)) return undefined;
      const metaURL = challengeParam(challenge, 'resource_metadata');
      if (!metaURL) throw new Error(`the challenge names no resource_metadata: ${challenge}`);
      const meta = await (await plainFetch(metaURL)).json();
      const issuer = meta.authorization_servers[0];
      const as = await (await fetch(`${issuer}/.well-known/openid-configuration`)).json();
      handler.tokenEndpoint = as.token_endpoint;
      const tok = await fetch(as.token_endpoint, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          Authorization: 'Basic ' + Buffer.from(`${encodeURIComponent(clientID)}:${encodeURIComponent(secret)}`).toString('base64'),
        },
        // resource (RFC 8707) asks for a token for kfa: a JWT whose audience is kfa.
        body: new URLSearchParams({ grant_type: 'client_credentials', scope, resource: meta.resource }),
      });
      const body = await tok.json();
      if (!body.access_token) throw new Error(`no token: ${JSON.stringify(body)}`);
      handler.retries++;
      return { Authorization: `Bearer ${body.access_token}` };
    },
    onSuccessfulRetry: async (h) => {
      current = h;
    },
  };
  return handler;
}

function factory(fetchImpl, preferred) {
  return new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl: plainFetch }),
      preferredTransports: [preferred],
      clientConfig: { polling: true },
    })
  );
}

const dataMessage = (id, data) => ({
  message: {
    messageId: id,
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'data', value: data }, mediaType: 'application/json', filename: '' }],
  },
});

const card = await new DefaultAgentCardResolver({ fetchImpl: plainFetch }).resolve(base);
const cc = Object.values(card.securitySchemes).find((s) => s.scheme?.$case === 'oauth2SecurityScheme' && s.scheme.value.flows?.flow?.$case === 'clientCredentials');
check(cc !== undefined, 'the SDK parses the card with its oauth2 schemes', card.securitySchemes);

for (const binding of ['JSONRPC', 'HTTP+JSON']) {
  const h = oauthHandler(process.env.KFA_CLIENT_ID, process.env.KFA_CLIENT_SECRET, 'read post');
  const client = await factory(createAuthenticatingFetchWithRetry(plainFetch, h), binding).createFromUrl(base);
  const task = await client.sendMessage(dataMessage(`o-${binding}`, { action: 'ask', question: `Asked with a client credentials token over ${binding}` }));
  check(task.status?.state === TaskState.TASK_STATE_WORKING && h.retries === 1, `${binding}: an ask with a client credentials token`, { task, retries: h.retries });
  check(h.tokenEndpoint === cc.scheme.value.flows.flow.value.tokenUrl, `${binding}: the challenge led to the card's token endpoint`, h.tokenEndpoint);
  const got = await client.getTask({ id: task.id, tenant: '' });
  check(got.id === task.id && h.retries === 1, `${binding}: the task, with the token kept`, got);
  const me = (await client.getAgentCard()).capabilities.extensions.find((e) => e.uri === 'urn:kfa:extension:caller:v1');
  check(me?.params?.authenticated === true && me.params.name === 'build-bot', `${binding}: the token's agent`, me);

  // A token without post: the SDK's handler does not retry a scope refusal.
  const reader = oauthHandler(process.env.KFA_CLIENT_ID, process.env.KFA_CLIENT_SECRET, 'read');
  const readOnly = await factory(createAuthenticatingFetchWithRetry(plainFetch, reader), binding).createFromUrl(base);
  await readOnly.getTask({ id: task.id, tenant: '' });
  let err;
  try {
    await readOnly.sendMessage(dataMessage(`r-${binding}`, { action: 'ask', question: 'Asked with a read-only token' }));
  } catch (e) {
    err = e;
  }
  check(err !== undefined && /post/.test(String(err)), `${binding}: a read-only token cannot ask`, String(err));
}
