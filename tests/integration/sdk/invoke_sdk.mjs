#!/usr/bin/env node
// Drives coldbrew's Lambda Invoke API with the real AWS SDK for JavaScript v3, as an
// application would, and prints what the SDK made of the answer as one JSON line.
//
//   node invoke_sdk.mjs ENDPOINT SCENARIO [FUNCTION_NAME [PAYLOAD_JSON]]
//
// ENDPOINT is e.g. http://127.0.0.1:3001. SCENARIO picks the Invoke request:
//   sync      RequestResponse                    (Fake, payload {})
//   error     a function error → FunctionError   (Fake, {"error": {…}})
//   tail      LogType: 'Tail'                     (Fake, {"log": "tail-marker", "reply": {…}})
//   event     InvocationType: 'Event' → 202       (Fake, {"log": "event-marker"})
//   dryrun    InvocationType: 'DryRun' → 204      (Fake, {})
//   missing   unknown function → 404              (NoSuchFunction, {})
//   throttle  one invocation of a function that is at its limit → 429   (Narrow, {})
// The payloads are scripts for the fake handler (tests/fakes/fake_handler.cpp); FUNCTION_NAME
// and PAYLOAD_JSON replace the scenario's defaults.
//
// Output, one line: {"scenario", "function", "ok", "status", "function_error",
// "executed_version", "log_result" (decoded), "payload" (text), "request_id", "error"}, where
// error is null or {"name", "http_status", "reason", "type", "message", "code"}.
// Exit status: 0 when the SDK got an answer from the service (a service error included),
// 1 when it did not (connection refused, timeout), 2 for bad arguments or a missing SDK.

const scenarios = {
  sync: { fn: 'Fake', payload: {} },
  error: {
    fn: 'Fake',
    payload: { error: { errorType: 'Fake.Boom', errorMessage: 'scripted failure' } },
  },
  tail: {
    fn: 'Fake',
    payload: { log: 'tail-marker', reply: { tailed: true } },
    params: { LogType: 'Tail' },
  },
  event: { fn: 'Fake', payload: { log: 'event-marker' }, params: { InvocationType: 'Event' } },
  dryrun: { fn: 'Fake', payload: {}, params: { InvocationType: 'DryRun' } },
  missing: { fn: 'NoSuchFunction', payload: {} },
  throttle: { fn: 'Narrow', payload: {} },
};

function usage(why) {
  process.stderr.write(
    `invoke_sdk: ${why}\nusage: node invoke_sdk.mjs ENDPOINT ` +
      `{${Object.keys(scenarios).join('|')}} [FUNCTION_NAME [PAYLOAD_JSON]]\n`,
  );
  process.exit(2);
}

const [endpoint, scenarioName, fnArg, payloadArg] = process.argv.slice(2);
if (!endpoint || !scenarioName) usage('ENDPOINT and SCENARIO are required');
const scenario = scenarios[scenarioName];
if (!scenario) usage(`unknown scenario "${scenarioName}"`);
let payload = scenario.payload;
if (payloadArg !== undefined) {
  try {
    payload = JSON.parse(payloadArg);
  } catch (e) {
    usage(`PAYLOAD_JSON does not parse: ${e.message}`);
  }
}
const functionName = fnArg || scenario.fn;

// Imported here rather than at the top so a missing install says what to do.
let sdk;
try {
  sdk = await import('@aws-sdk/client-lambda');
} catch (e) {
  process.stderr.write(
    `invoke_sdk: cannot load @aws-sdk/client-lambda (${e.code || e.message}); ` +
      'run tools/setup.sh to install it into tests/integration/sdk/node_modules\n',
  );
  process.exit(2);
}
const { LambdaClient, InvokeCommand } = sdk;

const client = new LambdaClient({
  endpoint,
  region: 'us-east-1',
  credentials: { accessKeyId: 'AKIDLOCAL', secretAccessKey: 'local-secret' },
  // Every answer is asserted as it came: no retry may hide a throttle.
  maxAttempts: 1,
});

const text = (bytes) => (bytes && bytes.length ? new TextDecoder().decode(bytes) : '');

const result = {
  scenario: scenarioName,
  function: functionName,
  ok: false,
  status: null,
  function_error: null,
  executed_version: null,
  log_result: null,
  payload: null,
  request_id: null,
  error: null,
};

let exitCode = 0;
try {
  const out = await client.send(
    new InvokeCommand({
      FunctionName: functionName,
      Payload: new TextEncoder().encode(JSON.stringify(payload)),
      ...(scenario.params || {}),
    }),
  );
  result.ok = true;
  result.status = out.StatusCode ?? null;
  result.function_error = out.FunctionError ?? null;
  result.executed_version = out.ExecutedVersion ?? null;
  result.log_result =
    out.LogResult !== undefined ? Buffer.from(out.LogResult, 'base64').toString('utf8') : null;
  result.payload = text(out.Payload);
  result.request_id = out.$metadata?.requestId ?? null;
} catch (e) {
  const httpStatus = e.$metadata?.httpStatusCode ?? null;
  result.status = httpStatus;
  result.request_id = e.$metadata?.requestId ?? null;
  result.error = {
    name: e.name ?? null,
    http_status: httpStatus,
    reason: e.Reason ?? null,
    type: e.Type ?? null,
    message: e.message ?? null,
    code: e.code ?? null,
  };
  // No HTTP status means no answer from the service at all.
  if (httpStatus === null) exitCode = 1;
} finally {
  client.destroy();
}

process.stdout.write(JSON.stringify(result) + '\n');
process.exitCode = exitCode;
