// A REST API Lambda TOKEN authorizer in the shape of AWS's blueprint: the token decides.
//   Bearer allow-<user>   Allow every method of this API, principal <user>
//   Bearer orders-only    Allow GET /orders only (a cached policy then denies /orders POST)
//   Bearer deny           an explicit Deny: 403
//   Bearer unauthorized   throws "Unauthorized": 401
//   anything else         throws: the authorizer failed, 500
exports.handler = async (event) => {
  const token = (event.authorizationToken || "").replace(/^Bearer /, "");
  // arn:aws:execute-api:region:account:apiId/stage/METHOD/path
  const [arnPrefix, stage] = event.methodArn.split("/");
  const everything = `${arnPrefix}/${stage}/*/*`;
  if (token.startsWith("allow-")) {
    const user = token.slice("allow-".length);
    return policy(user, "Allow", everything, { user, tier: 3, admin: false });
  }
  if (token === "orders-only") return policy("orders", "Allow", `${arnPrefix}/${stage}/GET/orders`);
  if (token === "deny") return policy("nobody", "Deny", everything);
  if (token === "unauthorized") throw new Error("Unauthorized");
  throw new Error(`cannot check token ${token}`);
};

function policy(principalId, effect, resource, context) {
  const answer = {
    principalId,
    policyDocument: {
      Version: "2012-10-17",
      Statement: [{ Action: "execute-api:Invoke", Effect: effect, Resource: resource }],
    },
  };
  if (context) answer.context = context;
  return answer;
}
