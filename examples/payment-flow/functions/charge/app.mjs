// Charge: asks the card processor (PSP_URL, the `psp` dependency in coldbrew.yaml, reached
// through coldbrew's proxy) to charge the payment. The `idempotent` variant sends the payment
// id as the Idempotency-Key, so a retried Task gets the first charge back instead of a second
// one; the `naive` variant sends none.
import http from 'node:http';

function post(url, body, headers) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let data = '';
      res.on('data', (c) => { data += c; });
      res.on('end', () => resolve({ status: res.statusCode, body: data }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

export const handler = async (event) => {
  const headers = event.variant === 'idempotent' ? { 'idempotency-key': event.payment } : {};
  const res = await post(`${process.env.PSP_URL}/v1/charges`,
                         { payment: event.payment, amount: event.amount, currency: event.currency },
                         headers);
  if (res.status !== 200) {
    const err = new Error(`card processor answered ${res.status}: ${res.body}`);
    err.name = 'ChargeFailed';
    throw err;
  }
  const charge = JSON.parse(res.body);
  console.log(`[Charge] ${charge.id} payment ${event.payment} amount ${event.amount} ${event.currency}` +
              ` variant ${event.variant}${charge.replayed ? ' replayed' : ''}`);
  return charge;
};
