// Fan-out orchestrator: splits items 0..M-1 into N index ranges, invokes the Worker function
// once per range, all at once, through the AWS SDK's Lambda client, and combines the partial
// results.
//
// GET /fanout?workers=N&items=M&seed=S   (defaults 4, 100000, 42)
// → {"workers","items","seed","count","sum","min","max","mean","elapsed_ms","per_worker":[…]}
//   per_worker[k]: the worker's own answer (its range, count, sum, min, max, compute_ms,
//   cold_start, request_id) plus invoke_ms, the round trip as the orchestrator saw it.
// A worker that fails or is throttled turns the whole answer into a 502 naming it.

import { LambdaClient, InvokeCommand } from '@aws-sdk/client-lambda';

// No endpoint here: the SDK reads AWS_ENDPOINT_URL_LAMBDA, which coldbrew sets to its Invoke
// API; on AWS the variable is unset and the same code calls Lambda. Built once per execution
// environment, so warm invocations reuse its connections.
const lambda = new LambdaClient({});
const workerFunction = process.env.WORKER_FUNCTION || 'Worker';

const limits = {
  workers: { default: 4, min: 1, max: 50 }, // the SDK's default of 50 sockets per host
  items: { default: 100_000, min: 0, max: 10_000_000 },
  seed: { default: 42, min: 0, max: 0xffffffff },
};

function reply(statusCode, body) {
  return {
    statusCode,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  };
}

function intParam(query, name) {
  const { default: fallback, min, max } = limits[name];
  const text = query[name];
  if (text === undefined || text === '') return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new RangeError(`${name} must be an integer from ${min} to ${max}, got "${text}"`);
  }
  return n;
}

async function invokeWorker(share) {
  const began = performance.now();
  try {
    const out = await lambda.send(
      new InvokeCommand({ FunctionName: workerFunction, Payload: JSON.stringify(share) }),
    );
    const invoke_ms = Math.round((performance.now() - began) * 1000) / 1000;
    const answer = JSON.parse(new TextDecoder().decode(out.Payload));
    if (out.FunctionError) return { worker: share.worker, invoke_ms, error: answer };
    return { ...answer, invoke_ms };
  } catch (e) {
    // A service error (throttled, unknown function) or no answer at all.
    return {
      worker: share.worker,
      error: { errorType: e.name, errorMessage: e.message, reason: e.Reason },
    };
  }
}

export const handler = async (event) => {
  let workers, items, seed;
  try {
    const query = event.queryStringParameters || {};
    workers = intParam(query, 'workers');
    items = intParam(query, 'items');
    seed = intParam(query, 'seed');
  } catch (e) {
    return reply(400, { message: e.message });
  }

  const shares = Array.from({ length: workers }, (_, k) => ({
    worker: k,
    seed,
    start: Math.floor((k * items) / workers),
    end: Math.floor(((k + 1) * items) / workers),
  }));
  const began = performance.now();
  const results = await Promise.all(shares.map(invokeWorker));
  const elapsed_ms = Math.round((performance.now() - began) * 1000) / 1000;

  const failed = results.filter((r) => r.error);
  if (failed.length) {
    return reply(502, { message: `${failed.length} of ${workers} workers failed`, failed });
  }

  let count = 0, sum = 0, min = null, max = null;
  for (const r of results) {
    count += r.count;
    sum += r.sum; // at most 10^7 items below 10^6: exact in a double
    if (r.min !== null && (min === null || r.min < min)) min = r.min;
    if (r.max !== null && (max === null || r.max > max)) max = r.max;
  }
  return reply(200, {
    workers,
    items,
    seed,
    count,
    sum,
    min,
    max,
    mean: count ? sum / count : null,
    elapsed_ms,
    per_worker: results,
  });
};
