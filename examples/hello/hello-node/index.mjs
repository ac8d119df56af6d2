// HelloNode: greets and echoes the request. The same handler serves API Gateway REST events
// (payload format 1.0: httpMethod, path) and HTTP API events (2.0: requestContext.http,
// rawPath), which is how a real function behind both APIs has to be written.

export const handler = async (event, context) => {
  const v2 = event.version === '2.0';
  const method = v2 ? event.requestContext.http.method : event.httpMethod;
  const path = v2 ? event.rawPath : event.path;
  const query = event.queryStringParameters ?? {};
  const name = query.name ?? event.pathParameters?.proxy ?? 'world';

  let posted = null;
  if (event.body) {
    const text = event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
    try {
      posted = JSON.parse(text);
    } catch {
      posted = text;
    }
  }

  // Goes to the function's log stream as "<time>\t<request id>\tINFO\t<message>".
  console.log('%s %s (payload %s)', method, path, v2 ? '2.0' : '1.0');

  return {
    statusCode: method === 'POST' ? 201 : 200,
    headers: { 'content-type': 'application/json', 'x-hello-runtime': 'nodejs' },
    body: JSON.stringify({
      message: `${process.env.GREETING}, ${name}! From ${process.env.RUNTIME_LABEL} ${process.versions.node}.`,
      deployedIn: process.env.DEPLOYED_IN,
      payloadVersion: v2 ? '2.0' : '1.0',
      method,
      path,
      query,
      pathParameters: event.pathParameters ?? null,
      posted,
      requestId: context.awsRequestId,
      remainingTimeMs: context.getRemainingTimeInMillis(),
    }),
  };
};
