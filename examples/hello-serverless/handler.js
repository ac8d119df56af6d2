'use strict';
// hello (Node.js, CommonJS): greets and echoes the request. REST routes send payload format
// 1.0 events (httpMethod, path), HTTP API routes 2.0 (requestContext.http.method, rawPath).

module.exports.hello = async (event, context) => {
  const v2 = event.version === '2.0';
  const method = v2 ? event.requestContext.http.method : event.httpMethod;
  const path = v2 ? event.rawPath : event.path;
  const name = event.pathParameters?.name ?? event.queryStringParameters?.name ?? 'world';

  let posted = null;
  if (event.body) {
    const text = event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
    try {
      posted = JSON.parse(text);
    } catch {
      posted = text;
    }
  }

  console.log('%s %s (payload %s)', method, path, v2 ? '2.0' : '1.0');
  return {
    statusCode: method === 'POST' ? 201 : 200,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      message: `${process.env.GREETING}, ${name}! From ${process.env.RUNTIME_LABEL}.`,
      service: process.env.SERVICE_NAME,
      stage: process.env.STAGE,
      functionName: context.functionName,
      payloadVersion: v2 ? '2.0' : '1.0',
      method,
      path,
      posted,
    }),
  };
};
