#!/usr/bin/env node
// Drives coldbrew's Step Functions API with the real AWS SDK for JavaScript v3
// (@aws-sdk/client-sfn), as an application would: StartExecution, DescribeExecution until
// the execution has ended, then GetExecutionHistory; prints what the SDK made of the answers
// as one JSON line.
//
//   node sfn_sdk.mjs ENDPOINT STATE_MACHINE_ARN INPUT_JSON [NAME]
//
// Output: {"start": {executionArn, startDate}, "describe": {status, output, error, cause,
// name, stateMachineArn}, "history": [{id, type, previousEventId}], "error": null |
// {"name", "message", "http_status"}}. Exit status 0 when the SDK got answers (an API error
// included), 1 when it did not, 2 for bad arguments.

import { SFNClient, StartExecutionCommand, DescribeExecutionCommand,
         GetExecutionHistoryCommand } from '@aws-sdk/client-sfn';

const [endpoint, arn, input, name] = process.argv.slice(2);
if (!endpoint || !arn || !input) {
  console.error('usage: sfn_sdk.mjs ENDPOINT STATE_MACHINE_ARN INPUT_JSON [NAME]');
  process.exit(2);
}
const client = new SFNClient({
  endpoint,
  region: 'us-east-1',
  credentials: { accessKeyId: 'coldbrew', secretAccessKey: 'coldbrew' },
  maxAttempts: 1,
});
const out = { start: null, describe: null, history: null, error: null };
try {
  const started = await client.send(new StartExecutionCommand({
    stateMachineArn: arn, input, ...(name ? { name } : {}),
  }));
  out.start = { executionArn: started.executionArn, startDate: started.startDate?.toISOString() };
  const until = Date.now() + 10000;
  let d;
  for (;;) {
    d = await client.send(new DescribeExecutionCommand({ executionArn: started.executionArn }));
    if (d.status !== 'RUNNING' || Date.now() > until) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  out.describe = { status: d.status, output: d.output ?? null, error: d.error ?? null,
                   cause: d.cause ?? null, name: d.name, stateMachineArn: d.stateMachineArn };
  const h = await client.send(new GetExecutionHistoryCommand({ executionArn: started.executionArn }));
  out.history = h.events.map((e) => ({ id: e.id, type: e.type, previousEventId: e.previousEventId }));
} catch (e) {
  out.error = { name: e.name, message: e.message, http_status: e.$metadata?.httpStatusCode ?? null };
  if (!e.$metadata?.httpStatusCode) {
    console.log(JSON.stringify(out));
    process.exit(1);
  }
}
console.log(JSON.stringify(out));
