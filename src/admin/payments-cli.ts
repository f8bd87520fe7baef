// npm run payments -- list [--since 24h|7d|2026-11-01] [--until …] [--status STATUS] [--limit N] [--json]
//                    summary [--since 30d] [--until …] [--json]   (and what settling cost, per scheme and network)
//                    resolve ID settled --tx 0xHASH [--amount UNITS] | resolve ID settle_failed --reason TEXT | resolve ID cancelled --reason TEXT
//                    batch [--since 24h] [--limit N] [--json]   (batch settlement: deposits, charges, claims, settlements, refunds)
// (compiled: node dist/admin/payments-cli.js …)
//
// Where it reads: with DATABASE_URL, the PostgreSQL server directly. Otherwise the ledger is the
// embedded database in DATA_DIR, which belongs to the server's process while it runs: the CLI asks the
// running server over its admin socket (DATA_DIR/admin.sock); when no server runs, it opens the
// directory itself; when a server owns the directory but does not answer, it refuses and says why.
// Its settings are the server's: the environment, over `.env` in the working directory when there is one.
import { splitArgs, wantsHelp } from './cli-args.ts';
import { X402_NETWORKS } from '../payments/networks.ts';
import { listBatchEvents, type BatchEventRecord } from '../db/batch-events.ts';
import type { Database } from '../db/database.ts';
import type { DatabaseSettings } from '../db/open.ts';
import { PAYMENT_STATUSES, type FinalWriteStats, type PaymentFilter, type PaymentRecord, type PaymentStatus, type PaymentSummaryRow } from '../db/payment-rows.ts';
import { listPayments, resolvePayment, summarizePayments, type Resolution } from '../db/payment-reports.ts';
import { pglitePaths } from '../db/pglite.ts';
import { settlingCosts, type SettlingCostRow, type SettlingFees } from '../db/settling-costs.ts';
import { SVM_NETWORKS, tokenDecimals } from '../payments/networks.ts';
import { PAYMENTS_ENV } from '../payments/settings.ts';
import { DATABASE_ENV } from '../db/env.ts';
import { ConfigError } from '../lib/env.ts';
import { AdminRequestError, adminRequest } from './client.ts';
import { ADMIN_DEADLINE_HELP, adminDbTimeout } from './deadline.ts';
import { cliSettings, CliError, connect, settingsProblem, UsageError } from './connect.ts';
import { controlFreeJson, escapeControl } from '../lib/control-chars.ts';

const USAGE = `usage: npm run payments -- list [--since 24h|7d|2026-11-01] [--until TIME] [--status ${PAYMENT_STATUSES.join('|')}] [--limit N] [--json]
       npm run payments -- summary [--since 30d] [--until TIME] [--json]
       npm run payments -- resolve ID settled --tx 0xHASH [--amount UNITS]
       npm run payments -- resolve ID settle_failed --reason TEXT [--tx 0xHASH]
       npm run payments -- resolve ID cancelled --reason TEXT
       npm run payments -- batch [--since 24h|7d|2026-11-01] [--limit N] [--json]
       npm run payments -- --help
(compiled: node dist/admin/payments-cli.js …)
${ADMIN_DEADLINE_HELP}`;

interface Summary {
  rows: PaymentSummaryRow[];
  /** Per scheme and network: paid calls, on-chain settlements, the facilitator's fees, revenue and net. */
  costs: SettlingCostRow[];
  /** The facilitator's price the fees are counted at. */
  fees: SettlingFees;
  /** The running server's ledger write health (null when read directly). */
  ledger: FinalWriteStats | null;
}

/** Where the ledger is read from: the running server, or the database itself. */
interface Ledger {
  list(f: PaymentFilter): Promise<PaymentRecord[]>;
  summary(f: PaymentFilter): Promise<Summary>;
  resolve(id: string, r: Resolution): Promise<{ id: string; previous: PaymentStatus; status: PaymentStatus }>;
  batchEvents(f: PaymentFilter): Promise<BatchEventRecord[]>;
  close(): Promise<void>;
}

type Task =
  | { command: 'list'; filter: PaymentFilter }
  | { command: 'summary'; filter: PaymentFilter }
  | { command: 'resolve'; id: string; resolution: Resolution }
  | { command: 'batch'; filter: PaymentFilter };

async function main(argv: string[]): Promise<void> {
  if (wantsHelp(argv)) return console.log(USAGE);
  const { command, positional, flags } = parseArgs(argv);
  // Every argument is checked before anything is opened.
  const task: Task =
    command === 'list'
      ? { command, filter: { since: time(flags.since, 'since'), until: time(flags.until, 'until'), status: status(flags.status), limit: limit(flags.limit) } }
      : command === 'summary'
        ? { command, filter: { since: time(flags.since ?? '30d', 'since'), until: time(flags.until, 'until') } }
        : command === 'batch'
          ? { command, filter: { since: time(flags.since, 'since'), limit: limit(flags.limit) } }
          : { command, id: positional[0] ?? usage('resolve needs the payment id'), resolution: resolution(positional[1], flags) };
  const settings = databaseSettings();
  const ledger = await ledgerOf(settings, task.command === 'resolve');
  if (!ledger) {
    // No database exists yet: nothing was ever recorded.
    if (flags.json) console.log(command === 'summary' ? JSON.stringify({ rows: [], costs: [], fees: feeSettings().fees, ledger: null }) : '[]');
    else console.log(`no payments: there is no database in ${pglitePaths(settings.dataDir).cluster} yet`);
    return;
  }
  try {
    switch (task.command) {
      case 'list': {
        const rows = await ledger.list(task.filter);
        console.log(flags.json ? controlFreeJson(rows) : listTable(rows));
        break;
      }
      case 'summary': {
        const summary = await ledger.summary(task.filter);
        console.log(flags.json ? controlFreeJson(summary) : summaryTable(summary));
        break;
      }
      case 'resolve': {
        const done = await ledger.resolve(task.id, task.resolution);
        console.log(`payment ${escapeControl(done.id)}: ${done.previous} → ${done.status}`);
        break;
      }
      case 'batch': {
        const events = await ledger.batchEvents(task.filter);
        console.log(flags.json ? controlFreeJson(events) : batchTable(events));
        break;
      }
    }
  } finally {
    await ledger.close();
  }
}

function parseArgs(argv: string[]): { command: Task['command']; positional: string[]; flags: Record<string, string | undefined> } {
  const [command, ...rest] = argv;
  if (command !== 'list' && command !== 'summary' && command !== 'resolve' && command !== 'batch') usage(command ? `unknown command ${command}` : 'no command');
  const { flags, positional } = splitArgs(rest, usage);
  const known = { list: ['since', 'until', 'status', 'limit', 'json'], summary: ['since', 'until', 'json'], resolve: ['tx', 'amount', 'reason'], batch: ['since', 'limit', 'json'] }[command];
  for (const name of Object.keys(flags)) if (!known.includes(name)) usage(`--${name} is not an option of ${command}`);
  return { command, positional, flags };
}

function usage(problem: string): never {
  throw new UsageError(problem);
}

/** DATA_DIR, DATABASE_URL and DB_TIMEOUT_MS, parsed as the server parses them. */
function databaseSettings(): DatabaseSettings {
  const e = cliSettings(DATABASE_ENV);
  return { dataDir: e.DATA_DIR, url: e.DATABASE_URL, timeoutMs: adminDbTimeout(e.DB_TIMEOUT_MS) };
}

/** The facilitator's price and the configured token, as the server reads them (X402_FACILITATOR_FEE_USD, …). */
function feeSettings(): { fees: SettlingFees; decimalsOf: (asset: string) => number | undefined } {
  const { X402_FACILITATOR_FEE_USD, X402_FACILITATOR_FREE_PER_MONTH, X402_ASSET, X402_ASSET_DECIMALS, X402_SVM_ASSET } = PAYMENTS_ENV;
  const e = cliSettings({ X402_FACILITATOR_FEE_USD, X402_FACILITATOR_FREE_PER_MONTH, X402_ASSET, X402_ASSET_DECIMALS, X402_SVM_ASSET });
  // A token other than USDC takes X402_ASSET_DECIMALS, on Base as on Solana (svm-settings.ts); known USDC is 6.
  const svmCustom = e.X402_SVM_ASSET && !Object.values(SVM_NETWORKS).some((n) => n.usdc === e.X402_SVM_ASSET) ? e.X402_SVM_ASSET : undefined;
  const configured = [e.X402_ASSET, svmCustom].map((address) => (address ? { address, decimals: e.X402_ASSET_DECIMALS } : undefined));
  return { fees: { feeUsd: e.X402_FACILITATOR_FEE_USD, freePerMonth: e.X402_FACILITATOR_FREE_PER_MONTH }, decimalsOf: (asset) => tokenDecimals(asset, configured) };
}

/** The ledger to read, or null when there is no embedded database at all (and nothing to write to). */
async function ledgerOf(settings: DatabaseSettings, writing: boolean): Promise<Ledger | null> {
  const connection = await connect({
    settings,
    probe: '/payments?limit=1',
    verb: 'reading',
    noDatabase: (cluster) => {
      if (writing) throw new CliError(`there is no database in ${cluster}: no payment to resolve`);
      return 'none';
    },
  });
  if (!connection) return null;
  return connection.via === 'server' ? throughServer(connection.socket) : direct(connection.db);
}

function throughServer(socket: string): Ledger {
  const query = (f: PaymentFilter) => {
    const q = new URLSearchParams();
    if (f.since) q.set('since', f.since.toISOString());
    if (f.until) q.set('until', f.until.toISOString());
    if (f.status) q.set('status', f.status);
    if (f.limit) q.set('limit', String(f.limit));
    return q.size ? `?${q}` : '';
  };
  return {
    list: (f) => adminRequest(socket, 'GET', `/payments${query(f)}`),
    summary: (f) => adminRequest(socket, 'GET', `/payments/summary${query(f)}`),
    resolve: (id, r) => adminRequest(socket, 'POST', '/payments/resolve', { id, ...r }),
    batchEvents: (f) => adminRequest(socket, 'GET', `/payments/batch-events${query(f)}`),
    close: async () => {},
  };
}

function direct(db: Database): Ledger {
  return {
    list: (f) => listPayments(db, f),
    summary: async (f) => {
      const { fees, decimalsOf } = feeSettings();
      return { rows: await summarizePayments(db, f), costs: await settlingCosts(db, f, fees, decimalsOf), fees, ledger: null };
    },
    resolve: (id, r) => resolvePayment(db, id, r),
    batchEvents: (f) => listBatchEvents(db, f.since, f.limit ?? 100),
    close: () => db.close(),
  };
}

/** `24h`, `7d`, `30m`, a date (`2026-11-01`, UTC midnight) or an ISO-8601 time. */
function time(value: string | undefined, flag: string): Date | undefined {
  if (value === undefined) return undefined;
  const relative = /^(\d+)([mhd])$/.exec(value);
  if (relative) return new Date(Date.now() - Number(relative[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000 }[relative[2] as 'm' | 'h' | 'd']);
  const ms = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(ms) || !/^\d{4}-\d{2}-\d{2}/.test(value)) usage(`--${flag} ${value}: expected a duration (30m, 24h, 7d), a date (2026-11-01) or an ISO-8601 time`);
  return new Date(ms);
}

function status(value: string | undefined): PaymentStatus | undefined {
  if (value === undefined) return undefined;
  if (!(PAYMENT_STATUSES as readonly string[]).includes(value)) usage(`--status ${value}: expected one of ${PAYMENT_STATUSES.join(', ')}`);
  return value as PaymentStatus;
}

function limit(value: string | undefined): number {
  if (value === undefined) return 100;
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 100_000) usage(`--limit ${value}: expected a whole number from 1 to 100000`);
  return Number(value);
}

function resolution(outcome: string | undefined, flags: Record<string, string | undefined>): Resolution {
  switch (outcome) {
    case 'settled':
      if (!flags.tx || !/^0x[0-9a-fA-F]{64}$/.test(flags.tx)) usage('resolve ID settled needs --tx with the transfer\'s 0x transaction hash');
      if (flags.amount !== undefined && !/^\d+$/.test(flags.amount)) usage('--amount is in atomic units (a whole number)');
      return { status: 'settled', txHash: flags.tx, ...(flags.amount ? { settledAmount: flags.amount } : {}) };
    case 'settle_failed':
      return { status: 'settle_failed', errorReason: flags.reason ?? usage('resolve ID settle_failed needs --reason'), txHash: flags.tx ?? null };
    case 'cancelled':
      return { status: 'cancelled', reason: flags.reason ?? usage('resolve ID cancelled needs --reason') };
    default:
      return usage(`resolve ID settled|settle_failed|cancelled: got ${outcome ?? 'nothing'}`);
  }
}

/** Token amounts in whole tokens when the token is known (the networks' USDC, or X402_ASSET), else atomic units. */
function amount(atomic: string | null, asset: string): string {
  if (atomic === null) return '';
  const usdc = Object.values(X402_NETWORKS).some((n) => n.usdc.toLowerCase() === asset.toLowerCase());
  const custom = process.env.X402_ASSET?.toLowerCase() === asset.toLowerCase() ? Number(process.env.X402_ASSET_DECIMALS ?? 6) : undefined;
  const decimals = usdc ? 6 : custom;
  if (decimals === undefined || !Number.isInteger(decimals)) return `${atomic} units`;
  const padded = atomic.padStart(decimals + 1, '0');
  const whole = padded.slice(0, padded.length - decimals);
  const fraction = padded.slice(padded.length - decimals).replace(/0+$/, '');
  return `${whole}${fraction ? `.${fraction}` : ''}${usdc ? ' USDC' : ''}`;
}

/** Columns padded to their widest cell; every cell shown with its control characters escaped (payers and facilitators wrote some of them), so a row is one line. */
function table(header: string[], cells: string[][]): string {
  const rows = cells.map((r) => r.map(escapeControl));
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

function listTable(rows: PaymentRecord[]): string {
  if (rows.length === 0) return 'no payments';
  return table(
    ['verified_at', 'status', 'route', 'amount', 'payer', 'tx_hash', 'id', 'reason'],
    rows.map((r) => [r.verified_at.replace(/\.\d+Z$/, 'Z'), r.status, r.route, amount(r.settled_amount ?? r.amount_required, r.asset), r.payer ?? '', r.tx_hash ?? '', r.id, r.error_reason ?? '']),
  );
}

function batchTable(events: BatchEventRecord[]): string {
  if (events.length === 0) return 'no batch-settlement events';
  return table(
    ['at', 'type', 'amount', 'channel', 'payer', 'transaction'],
    events.map((e) => [e.at.replace(/\.\d+Z$/, 'Z'), e.type, `${e.amount} units`, e.channelId ?? '', e.payer ?? '', e.transaction ?? '']),
  );
}

function summaryTable({ rows, costs, fees, ledger }: Summary): string {
  const lines = [
    rows.length === 0
      ? 'no payments'
      : table(
          ['day', 'route', 'status', 'count', 'required', 'settled'],
          rows.map((r) => [r.day, r.route, r.status, String(r.count), amount(r.amount_required, r.asset), amount(r.amount_settled, r.asset)]),
        ),
  ];
  if (costs.length > 0) {
    const dollars = (v: string | null) => (v === null ? '?' : `${v.startsWith('-') ? '-' : ''}$${v.replace(/^-/, '')}`);
    lines.push(
      '',
      `settling costs: the facilitator's fee $${fees.feeUsd} per on-chain settlement past ${fees.freePerMonth} free a month (X402_FACILITATOR_FEE_USD, X402_FACILITATOR_FREE_PER_MONTH)`,
      table(
        ['scheme', 'network', 'paid calls', 'settlements', 'free', 'facilitator fees', 'revenue', 'net'],
        costs.map((c) => [c.scheme, c.network, String(c.paid_calls), String(c.settlements), String(c.free_settlements), dollars(c.facilitator_fees_usd), dollars(c.revenue_usd), dollars(c.net_usd)]),
      ),
    );
  }
  if (ledger && (ledger.final_writes_pending > 0 || ledger.final_writes_lost > 0 || ledger.final_write_failures > 0)) {
    lines.push(
      '',
      `ledger: ${ledger.final_writes_pending} final-status writes pending retry, ${ledger.final_writes_lost} lost (logged in full at error level), ${ledger.final_write_failures} failed attempts since start`,
    );
  }
  return lines.join('\n');
}

main(process.argv.slice(2)).catch((err) => {
  if (err instanceof UsageError) {
    console.error(`payments: ${err.message}\n${USAGE}`);
    process.exit(2);
  }
  const message =
    err instanceof ConfigError
      ? settingsProblem(err)
      : err instanceof CliError || err instanceof AdminRequestError
        ? err.message
        : `${(err as Error)?.message ?? err}`;
  console.error(`payments: ${message}`);
  process.exit(1);
});
