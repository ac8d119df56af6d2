#!/usr/bin/env node
// Prints a JWT signed by this example's test issuer, for the HTTP API's JwtAuth authorizer.
// The key pair in this folder exists only to test locally: anyone can read private.pem, so
// never trust it anywhere else.
//
//   node issuer/token.js                         # valid for an hour, scope orders.read
//   node issuer/token.js '{"aud":"other"}'       # claims merged over the defaults
//   node issuer/token.js '{"exp":-60}'           # exp/nbf/iat given as seconds from now
const crypto = require("crypto");
const fs = require("fs");
const path = require("path");

const now = Math.floor(Date.now() / 1000);
const given = process.argv[2] ? JSON.parse(process.argv[2]) : {};
const claims = {
  iss: "https://issuer.coldbrew.test",
  aud: "orders-api",
  sub: "alice",
  scope: "orders.read",
  iat: 0,
  exp: 3600,
  ...given,
};
for (const k of ["exp", "nbf", "iat"]) if (typeof claims[k] === "number") claims[k] += now;
const header = { alg: "RS256", typ: "JWT", kid: given.kid || "coldbrew-test-issuer-1" };
delete claims.kid;
const b64 = (o) => Buffer.from(JSON.stringify(o)).toString("base64url");
const input = b64(header) + "." + b64(claims);
const key = fs.readFileSync(path.join(__dirname, "private.pem"));
const signature = crypto.sign("sha256", Buffer.from(input), key).toString("base64url");
process.stdout.write(input + "." + signature + "\n");
