// Ledger: appends one line per recorded charge to LEDGER_PATH (JSON lines). The line is keyed
// by the charge id, so a retried write of the same charge is recognisable when counting.
import { appendFileSync } from 'node:fs';

export const handler = async (event) => {
  const entry = { payment: event.payment, charge: event.charge, amount: event.amount,
                  currency: event.currency, variant: event.variant };
  appendFileSync(process.env.LEDGER_PATH, JSON.stringify(entry) + '\n');
  console.log(`[Ledger] payment ${event.payment} charge ${event.charge}`);
  return { recorded: true };
};
