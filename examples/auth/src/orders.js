// Answers with what API Gateway passed on about the caller: the authorizer's context (REST:
// principalId and context keys; HTTP API: lambda or jwt), and the API key's id.
exports.handler = async (event) => ({
  statusCode: 200,
  headers: { "Content-Type": "application/json" },
  body: JSON.stringify({
    route: event.routeKey || `${event.httpMethod} ${event.resource}`,
    authorizer: event.requestContext.authorizer ?? null,
    apiKeyId: event.requestContext.identity?.apiKeyId ?? null,
  }),
});
