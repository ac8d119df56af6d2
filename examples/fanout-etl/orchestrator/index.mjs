// Fan-out ETL orchestrator: asks the data store for the data set's size, splits it into N
// byte ranges of whole 32-byte records, invokes one worker per range, all at once, through
// the AWS SDK's Lambda client, and adds up the orders per region.
//
// GET /query?memory=1024|10240&workers=N   (defaults 1024, 8)
// → {"memory","worker_function","workers","bytes","records","regions":{…},"elapsed_ms",
//    "per_worker":[…]}: per_worker[k] is worker k's answer (its range, bytes, download_ms,
//    compute_ms, cold_start, regions) plus invoke_ms, the round trip the orchestrator saw.
// A worker that fails or is throttled turns the answer into a 502 naming it.

import { LambdaClient, InvokeCommand } from '@aws-sdk/client-lambda';

// No endpoint: the SDK reads AWS_ENDPOINT_URL_LAMBDA, which coldbrew sets to its Invoke API.
const lambda = new LambdaClient({});
const RECORD = 32;
const workersByMemory = {
  1024: process.env.WORKER_1024 || 'Worker1024',
  10240: process.env.WORKER_10240 || 'Worker10240',
};

function reply(statusCode, body) {
  return { statusCode, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

async function dataSetSize() {
  // DATA_URL points at this execution environment's proxy to the data store.
  const res = await fetch(process.env.DATA_URL, { method: 'HEAD' });
  if (!res.ok) throw new Error(`HEAD ${process.env.DATA_URL}: HTTP ${res.status}`);
  return Number(res.headers.get('content-length'));
}

async function invokeWorker(functionName, share) {
  const began = performance.now();
  try {
    const out = await lambda.send(
      new InvokeCommand({ FunctionName: functionName, Payload: JSON.stringify(share) }),
    );
    const invoke_ms = Math.round((performance.now() - began) * 1000) / 1000;
    const answer = JSON.parse(new TextDecoder().decode(out.Payload));
    if (out.FunctionError) return { worker: share.worker, invoke_ms, error: answer };
    return { ...answer, invoke_ms };
  } catch (e) {
    return { worker: share.worker, error: { errorType: e.name, errorMessage: e.message } };
  }
}

export const handler = async (event) => {
  const query = event.queryStringParameters || {};
  const memory = query.memory || '1024';
  const workers = Number(query.workers || 8);
  const functionName = workersByMemory[memory];
  if (!functionName) return reply(400, { message: `memory must be 1024 or 10240, got "${memory}"` });
  if (!Number.isInteger(workers) || workers < 1 || workers > 50) {
    return reply(400, { message: `workers must be an integer from 1 to 50, got "${query.workers}"` });
  }

  let bytes;
  try {
    bytes = await dataSetSize();
  } catch (e) {
    return reply(502, { message: `the data store did not answer: ${e.message}` });
  }
  const records = Math.floor(bytes / RECORD);
  const shares = Array.from({ length: workers }, (_, k) => ({
    worker: k,
    start: Math.floor((k * records) / workers) * RECORD,
    end: Math.floor(((k + 1) * records) / workers) * RECORD,
  }));

  const began = performance.now();
  const results = await Promise.all(shares.map((s) => invokeWorker(functionName, s)));
  const elapsed_ms = Math.round((performance.now() - began) * 1000) / 1000;
  const failed = results.filter((r) => r.error);
  if (failed.length) {
    return reply(502, { message: `${failed.length} of ${workers} workers failed`, failed });
  }
  const regions = {};
  for (const r of results) {
    for (const [name, n] of Object.entries(r.regions)) regions[name] = (regions[name] || 0) + n;
  }
  return reply(200, {
    memory: Number(memory),
    worker_function: functionName,
    workers,
    bytes,
    records,
    regions,
    elapsed_ms,
    per_worker: results,
  });
};
