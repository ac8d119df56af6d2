// An HTTP API Lambda REQUEST authorizer with simple responses (payload format 2.0): the
// x-user header names the caller; "mallory" is turned away.
exports.handler = async (event) => {
  const user = event.headers?.["x-user"];
  if (!user || user === "mallory") return { isAuthorized: false };
  return { isAuthorized: true, context: { user, via: "request-authorizer" } };
};
