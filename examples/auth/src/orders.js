// Answers with what API Gateway passed on about the caller: the authorizer's context (REST:
// principalId and context keys; HTTP API: lambda or jwt), and the API key's id. Behind a REST
// API a proxy integration sets its own CORS header (API Gateway adds it only to the OPTIONS
// mock); the HTTP API adds it itself.
const rest = (event) => event.version !== "2.0";

exports.handler = async (event) => ({
  statusCode: 200,
  headers: {
    "Content-Type": "application/json",
    ...(rest(event) ? { "Access-Control-Allow-Origin": "https://shop.example.com" } : {}),
  },
  body: JSON.stringify({
    route: event.routeKey || `${event.httpMethod} ${event.resource}`,
    authorizer: event.requestContext.authorizer ?? null,
    apiKeyId: event.requestContext.identity?.apiKeyId ?? null,
  }),
});
