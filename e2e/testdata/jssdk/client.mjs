// The official JS SDK (@a2a-js/sdk) against a running kfa, as a client
// author would use it: the SDK resolves and parses the card, its
// getAgentCard() reads the extended card anonymously, and its credential
// mechanism (createAuthenticatingFetchWithRetry with an
// AuthenticationHandler) supplies the agent token when kfa's challenge
// asks for one. No header is set by hand. Run by e2e/jssdk_test.go, which
// gives KFA_URL (where kfa listens), KFA_PUBLIC_URL (the URL its card
// names) and KFA_TOKEN; it prints one line per check and exits non-zero on
// the first failure.
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
const token = process.env.KFA_TOKEN;

function check(ok, what, detail) {
  if (!ok) {
    console.error(`FAIL ${what}: ${typeof detail === 'string' ? detail : JSON.stringify(detail)}`);
    process.exit(1);
  }
  console.log(`ok ${what}`);
}

// The card names the public URL; the test's server listens elsewhere.
const rewrite = (url) => (String(url).startsWith(publicURL) ? base + String(url).slice(publicURL.length) : url);
const plainFetch = (url, init) => fetch(rewrite(url instanceof Request ? url.url : url), init);

// A credential handler as RFC 6750 reads a challenge: a Bearer challenge
// without an error attribute asks for a credential, so the token is sent
// (as the scheme the card declares, found by its kind); error="invalid_token"
// says the one sent does not work, and the request is not repeated.
function tokenHandler(card, schemeKind, secret) {
  const entry = Object.entries(card.securitySchemes).find(([, s]) => s.scheme?.$case === schemeKind);
  if (!entry) throw new Error(`the card declares no ${schemeKind}`);
  const [name, scheme] = entry;
  const header =
    schemeKind === 'apiKeySecurityScheme'
      ? { [scheme.scheme.value.name]: secret }
      : { Authorization: `${scheme.scheme.value.scheme} ${secret}` };
  let current = {};
  const handler = {
    scheme: name,
    retries: 0,
    headers: async () => current,
    shouldRetryWithHeaders: async (_req, res) => {
      const challenge = res.headers.get('www-authenticate') ?? '';
      if (!/^Bearer\b/i.test(challenge) || /\berror=/.test(challenge)) return undefined;
      handler.retries++;
      return header;
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
check(card.name === 'kfa' && card.capabilities?.extendedAgentCard, 'the SDK parses the card', card.capabilities);

for (const binding of ['JSONRPC', 'HTTP+JSON']) {
  // Anonymous: the first call, getAgentCard(), fetches the extended card.
  const anon = await factory(plainFetch, binding).createFromUrl(base);
  const ext = await anon.getAgentCard();
  const caller = ext.capabilities.extensions.find((e) => e.uri === 'urn:kfa:extension:caller:v1');
  check(caller?.params?.authenticated === false, `${binding}: getAgentCard() anonymously`, caller ?? ext);
  const found = await anon.sendMessage(dataMessage(`s-${binding}`, { action: 'search', query: 'agent card' }));
  check(found.role === Role.ROLE_AGENT, `${binding}: an anonymous search`, found);

  for (const kind of ['httpAuthSecurityScheme', 'apiKeySecurityScheme']) {
    const h = tokenHandler(card, kind, token);
    const client = await factory(createAuthenticatingFetchWithRetry(plainFetch, h), binding).createFromUrl(base);
    const task = await client.sendMessage(
      dataMessage(`a-${binding}-${kind}`, { action: 'ask', question: `Asked through the JS SDK over ${binding} with ${h.scheme}` })
    );
    check(task.status?.state === TaskState.TASK_STATE_WORKING && h.retries === 1, `${binding}, ${h.scheme}: an ask`, { task, retries: h.retries });
    const got = await client.getTask({ id: task.id, tenant: '' });
    check(got.id === task.id && h.retries === 1, `${binding}, ${h.scheme}: the task, with the token kept`, got);
    const mine = await client.getAgentCard();
    const me = mine.capabilities.extensions.find((e) => e.uri === 'urn:kfa:extension:caller:v1');
    check(me?.params?.authenticated === true && me.params.name === 'alice', `${binding}, ${h.scheme}: the caller's extended card`, me);
  }

  // A token that does not work is told so, and not sent again.
  const bad = tokenHandler(card, 'httpAuthSecurityScheme', 'kfa_not_a_token');
  const refused = await factory(createAuthenticatingFetchWithRetry(plainFetch, bad), binding).createFromUrl(base);
  let err;
  try {
    await refused.sendMessage(dataMessage(`b-${binding}`, { action: 'ask', question: 'Asked with a bad token' }));
  } catch (e) {
    err = e;
  }
  check(err !== undefined && bad.retries === 1, `${binding}: a bad token is refused once`, String(err));
}
