// Fraud check: a score in [0, 1) from the amount, the same for the same payment, so a retried
// check agrees with the first one. Amounts above 500,000 cents always score 0.95 (declined).
export const handler = async (event) => {
  const amount = Number(event.amount);
  if (!Number.isInteger(amount) || amount <= 0) {
    const err = new Error(`amount must be a positive integer of cents, got ${event.amount}`);
    err.name = 'InvalidPayment';
    throw err;
  }
  const score = amount > 500000 ? 0.95 : Math.min(0.5, amount / 1000000);
  console.log(`[Fraud] payment ${event.payment} amount ${amount} score ${score}`);
  return { payment: event.payment, score };
};
