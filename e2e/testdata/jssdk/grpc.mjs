// The official JS SDK's gRPC transport (@a2a-js/sdk/client/grpc, on
// @grpc/grpc-js) against a running kfa: the SDK parses the card, picks its
// GRPC interface, and calls every method of the service, with the agent
// token sent as authorization metadata by a call interceptor (the SDK's
// own place for service parameters). Run by e2e/jssdk_test.go, which gives
// KFA_URL (where kfa listens), KFA_GRPC (where its gRPC binding listens),
// KFA_TOKEN and KFA_OTHER_TOKEN (another agent's); it prints one line per
// check and exits non-zero on the first failure.
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, ServiceParameters } from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import { Role, TaskState } from '@a2a-js/sdk';

const base = process.env.KFA_URL;
const grpcAddr = process.env.KFA_GRPC;
const token = process.env.KFA_TOKEN;

function check(ok, what, detail) {
  if (!ok) {
    console.error(`FAIL ${what}: ${typeof detail === 'string' ? detail : JSON.stringify(detail)}`);
    process.exit(1);
  }
  console.log(`ok ${what}`);
}

// Sends the token as authorization metadata on every call.
const bearer = (secret) => ({
  before: async (args) => {
    args.options = {
      ...args.options,
      serviceParameters: ServiceParameters.createFrom(args.options?.serviceParameters, (p) => {
        p.authorization = `Bearer ${secret}`;
      }),
    };
  },
  after: async () => {},
});

const card = await new DefaultAgentCardResolver().resolve(base);
const iface = card.supportedInterfaces.find((i) => i.protocolBinding === 'GRPC');
check(iface?.protocolVersion === '1.0' && iface.url.endsWith(':' + grpcAddr.split(':').pop()), 'the card names the gRPC interface', card.supportedInterfaces);
iface.url = grpcAddr; // the card names the public host, which the test's server is not

const client = (secret) =>
  new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new GrpcTransportFactory()],
      preferredTransports: ['GRPC'],
      clientConfig: { polling: true, interceptors: secret ? [bearer(secret)] : [] },
    })
  ).createFromAgentCard(card);

// The SDK's gRPC codec wants every repeated field of a message present.
const dataMessage = (id, data, returnImmediately) => ({
  tenant: '',
  message: {
    messageId: id,
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'data', value: data }, mediaType: 'application/json', filename: '' }],
    extensions: [],
    referenceTaskIds: [],
  },
  configuration: { returnImmediately: !!returnImmediately, acceptedOutputModes: [] },
});

const anon = await client();
check(anon.transport.protocolName === 'GRPC', 'the SDK chose its gRPC transport', anon.transport.protocolName);
const found = await anon.sendMessage(dataMessage('js-grpc-s', { action: 'search', query: 'agent card' }));
check(found.role === Role.ROLE_AGENT, 'an anonymous search', found);
const anonCard = await anon.getAgentCard();
const anonCaller = anonCard.capabilities.extensions.find((e) => e.uri === 'urn:kfa:extension:caller:v1');
check(anonCaller?.params?.authenticated === false, 'the extended card, anonymously', anonCaller ?? anonCard);

const c = await client(token);
const mine = await c.getAgentCard();
const me = mine.capabilities.extensions.find((e) => e.uri === 'urn:kfa:extension:caller:v1');
check(me?.params?.name === 'alice', "the caller's extended card", me);
const task = await c.sendMessage(dataMessage('js-grpc-a', { action: 'ask', question: 'Asked through the JS SDK over gRPC' }, true));
check(task.status?.state === TaskState.TASK_STATE_WORKING, 'an ask', task);
const got = await c.getTask({ id: task.id, tenant: '' });
check(got.id === task.id, 'GetTask', got);
const list = await c.listTasks({ tenant: '', contextId: '', status: 0, pageSize: 100, pageToken: '', statusTimestampAfter: undefined });
check(list.tasks.some((t) => t.id === task.id), 'ListTasks', list);
const cfg = await c.createTaskPushNotificationConfig({
  tenant: '', id: '', taskId: task.id, url: 'https://example.com/hook', token: 't1', authentication: undefined,
});
check(cfg.id !== '' && cfg.url === 'https://example.com/hook', 'CreateTaskPushNotificationConfig', cfg);
const cfgGot = await c.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: cfg.id });
check(cfgGot.id === cfg.id && cfgGot.token === 't1', 'GetTaskPushNotificationConfig', cfgGot);
const cfgs = await c.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' });
check(cfgs.configs.length === 1, 'ListTaskPushNotificationConfigs', cfgs);
await c.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: cfg.id });
const none = await c.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' });
check(none.configs.length === 0, 'DeleteTaskPushNotificationConfig', none);

// A stream's events are StreamResponses: { payload: { $case, value } }.
const event = (r) => r.value?.payload ?? {};

// A subscription sees a cancel made by the same agent over gRPC.
const sub = c.resubscribeTask({ tenant: '', id: task.id });
const first = event(await sub.next());
check(first.$case === 'task' && first.value.id === task.id, 'SubscribeToTask: the task first', first);
const canceled = await c.cancelTask({ tenant: '', id: task.id, metadata: undefined });
check(canceled.status?.state === TaskState.TASK_STATE_CANCELED, 'CancelTask', canceled);
const update = event(await sub.next());
check(update.$case === 'statusUpdate' && update.value.status?.state === TaskState.TASK_STATE_CANCELED, 'SubscribeToTask: the cancel', update);
check((await sub.next()).done, 'SubscribeToTask: the end', '');

// A streamed ask: its task first.
const stream = c.sendMessageStream(dataMessage('js-grpc-st', { action: 'ask', question: 'Streamed through the JS SDK over gRPC' }));
const st = event(await stream.next());
check(st.$case === 'task' && st.value.status?.state === TaskState.TASK_STATE_WORKING, 'SendStreamingMessage: the task first', st);
await stream.return();

// Errors come back as the SDK's: a foreign task is not found, and a bad
// token is refused.
let err;
try {
  await (await client(process.env.KFA_OTHER_TOKEN)).getTask({ id: task.id, tenant: '' });
} catch (e) {
  err = e;
}
check(err !== undefined && /not found/i.test(String(err)), "another agent's GetTask", String(err));
err = undefined;
try {
  await (await client('kfa_not_a_token')).getTask({ id: task.id, tenant: '' });
} catch (e) {
  err = e;
}
check(err !== undefined && /invalid|unauthenticated/i.test(String(err)), 'a bad token', String(err));
