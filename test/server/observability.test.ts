/**
 * Metrics and logs after real traffic on the devnet: a filled request (made with a key whose webhook answers 500
 * once, then 200), an underpaid deposit that is refunded, and a quote refused by the core. The `/metrics` scrape
 * is parsed as Prometheus text and each family is checked against what happened, balances against the chain
 * itself; the gateway's JSON log lines are read back and every line about the filled request names it.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { formatUnits, parseEther, zeroAddress } from 'viem';
import WebSocket from 'ws';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { DevnetAccount, DevnetChain } from '../../src/chain/devnet.js';
import { hashApiKey } from '../../src/core/apiKeys/authenticate.js';
import { configureWebhook } from '../../src/core/webhooks/configureWebhook.js';
import { insertApiKey } from '../../src/store/apiKeys.repository.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { executeSteps, publicClientOf, requestQuote, waitForStatus } from '../helpers/quote.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';
import { rawDataText } from '../../src/ws/rawData.js';
import { depositNative as sendNativeDeposit } from '../helpers/deposits.js';

let gateway: TestGateway;
let receiver: Receiver;
let chainA: DevnetChain;
let chainB: DevnetChain;
const key = `igw_${randomBytes(24).toString('base64url')}`;
const logLines: Array<Record<string, any>> = [];
let filledRequest: { requestId: string; depositHash: string; fillHash: string } | undefined;

beforeAll(async () => {
  gateway = await startTestGateway(
    {
      logLevel: 'debug',
      logFormat: 'json',
      webhooks: {
        secretKey: undefined,
        timeoutMs: 1_000,
        retryBaseMs: 50,
        retryMaxMs: 200,
        pollIntervalMs: 50,
        retentionDays: 30,
      },
    },
    { server: { logDestination: { write: (line: string) => void logLines.push(JSON.parse(line)) } } },
  );
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
  receiver = await startReceiver(key);
});
afterAll(async () => {
  await gateway?.stop();
  await receiver?.close();
});

interface Sample {
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text format into samples by metric name (enough of it for these assertions). */
function parseMetrics(text: string): Map<string, Sample[]> {
  const samples = new Map<string, Sample[]>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, name, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[name!] = value!;
    const list = samples.get(match[1]!) ?? [];
    list.push({ labels, value: Number(match[3]) });
    samples.set(match[1]!, list);
  }
  return samples;
}

/** The value of the one sample of `name` whose labels include `labels`; undefined when there is none. */
function valueOf(
  samples: Map<string, Sample[]>,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const found = (samples.get(name) ?? []).filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  expect(found.length, `${name} ${JSON.stringify(labels)} matches ${found.length} samples`).toBeLessThanOrEqual(1);
  return found[0]?.value;
}

async function scrape(): Promise<Map<string, Sample[]>> {
  const response = await fetch(`${gateway.url}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseMetrics(await response.text());
}

it('after a fill, a refund and a refused quote, every family has the right values', async () => {
  const [alice, bob] = gateway.devnet.descriptor.accounts as [DevnetAccount, DevnetAccount];
  await insertApiKey(gateway.server.database.db, {
    id: 'metrics-key',
    name: 'Metrics key',
    keyHash: hashApiKey(key),
    now: Date.now(),
  });
  await configureWebhook(gateway.server.core, { apiKeyId: 'metrics-key', webhook: { url: receiver.url }, apiKey: key });
  receiver.script = [500];
  receiver.fallback = 200;

  // A subscriber of the reference's status stream, following a quoted request that is never paid, open while the scrape happens.
  const watched = await requestQuote(gateway, alice, {
    originCurrency: zeroAddress,
    destinationCurrency: zeroAddress,
    amount: parseEther('0.01').toString(),
  });
  const socket = new WebSocket(`${gateway.url.replace('http', 'ws')}/ws`);
  const messages: any[] = [];
  socket.on('message', (data) => messages.push(JSON.parse(rawDataText(data))));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  socket.send(
    JSON.stringify({
      type: 'subscribe',
      event: 'request.status.updated',
      filters: { id: watched.steps.at(-1)!.requestId },
    }),
  );
  await expect
    .poll(() => messages.some((message) => message.type === 'subscribe' && message.status === 'success'))
    .toBe(true);

  // A fill, made with the key.
  const fill = await requestQuote(
    gateway,
    alice,
    { originCurrency: zeroAddress, destinationCurrency: zeroAddress, amount: parseEther('0.02').toString() },
    { 'x-api-key': key },
  );
  await executeSteps(gateway, fill.steps, alice);
  const filled = await waitForStatus(gateway, fill.steps.at(-1)!.requestId, ['success']);
  filledRequest = {
    requestId: fill.steps.at(-1)!.requestId,
    depositHash: filled.inTxHashes[0],
    fillHash: filled.txHashes[0],
  };

  // A refund: the deposit is below the quoted amount.
  const refund = await requestQuote(gateway, bob, {
    originCurrency: zeroAddress,
    destinationCurrency: zeroAddress,
    amount: parseEther('0.02').toString(),
  });
  const refundId = refund.steps.at(-1)!.requestId;
  await sendNativeDeposit(chainA, bob, refundId, parseEther('0.019'));
  await waitForStatus(gateway, refundId, ['refund']);

  // A quote the core refuses.
  const refused = await call(gateway.url, 'getQuote', {
    body: {
      user: alice.address,
      originChainId: chainA.chainId,
      destinationChainId: chainB.chainId,
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: '0',
      tradeType: 'EXACT_INPUT',
    },
  });
  expect(refused.body).toMatchObject({ errorCode: 'AMOUNT_TOO_LOW' });

  // Three events of the keyed request: the first attempt is refused, then each is delivered.
  await receiver.waitFor((received) => received.filter((r) => r.answered === 200).length >= 3, 10_000);

  const m = await scrape();
  const route = { origin_chain_id: String(chainA.chainId), destination_chain_id: String(chainB.chainId) };
  expect(valueOf(m, 'gateway_quotes_total', { ...route, outcome: 'ok' })).toBe(3);
  expect(valueOf(m, 'gateway_quotes_total', { ...route, outcome: 'AMOUNT_TOO_LOW' })).toBe(1);

  expect(
    valueOf(m, 'gateway_http_request_duration_seconds_count', { operation: 'getQuote', method: 'POST', status: '200' }),
  ).toBe(3);
  expect(
    valueOf(m, 'gateway_http_request_duration_seconds_count', { operation: 'getQuote', method: 'POST', status: '400' }),
  ).toBe(1);
  expect(
    valueOf(m, 'gateway_http_request_duration_seconds_count', {
      operation: 'getIntentStatus',
      method: 'GET',
      status: '200',
    }),
  ).toBeGreaterThanOrEqual(2);

  expect(valueOf(m, 'gateway_request_status_transitions_total', { to: 'pending' })).toBe(2);
  expect(valueOf(m, 'gateway_request_status_transitions_total', { to: 'submitted' })).toBe(1);
  expect(valueOf(m, 'gateway_request_status_transitions_total', { to: 'success' })).toBe(1);
  expect(valueOf(m, 'gateway_request_status_transitions_total', { to: 'refund' })).toBe(1);
  expect(valueOf(m, 'gateway_refunds_total', { fail_reason: 'DEPOSITED_AMOUNT_TOO_LOW_TO_FILL' })).toBe(1);
  expect(m.get('gateway_refunds_total')).toHaveLength(1);

  expect(valueOf(m, 'gateway_deposit_to_fill_broadcast_seconds_count')).toBe(1);
  expect(valueOf(m, 'gateway_deposit_to_success_seconds_count')).toBe(1);
  expect(valueOf(m, 'gateway_deposit_to_success_seconds_sum')).toBeGreaterThanOrEqual(
    valueOf(m, 'gateway_deposit_to_fill_broadcast_seconds_sum')!,
  );
  expect(valueOf(m, 'gateway_deposit_to_success_seconds_bucket', { le: '+Inf' })).toBe(1);

  expect(valueOf(m, 'gateway_webhook_deliveries_total', { outcome: 'retry' })).toBe(1);
  expect(valueOf(m, 'gateway_webhook_deliveries_total', { outcome: 'delivered' })).toBe(3);

  expect(valueOf(m, 'gateway_stream_subscribers')).toBe(1);

  for (const chain of [chainA, chainB]) {
    const id = String(chain.chainId);
    expect(valueOf(m, 'gateway_rpc_request_duration_seconds_count', { chain_id: id })).toBeGreaterThan(0);
    expect(valueOf(m, 'gateway_rpc_errors_total', { chain_id: id }) ?? 0).toBe(0);
    const lag = valueOf(m, 'gateway_chain_head_lag_blocks', { chain_id: id });
    expect(lag).toBeGreaterThanOrEqual(0);
    // Automine: a block only when a transaction lands, and the watcher polls several times a second.
    expect(lag).toBeLessThan(5);
    const eth = await publicClientOf(chain).getBalance({ address: gateway.devnet.descriptor.solver.address });
    expect(valueOf(m, 'gateway_solver_balance', { chain_id: id, currency: 'ETH' })).toBe(Number(formatUnits(eth, 18)));
  }
  expect(valueOf(m, 'nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);
  socket.close();
});

it('the Grafana dashboard and the alert rules in docs/ only use metrics the gateway exports', async () => {
  // Every family is declared (`# TYPE`) whether or not it has samples yet.
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  const exported = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map(([, name]) => name!));
  for (const file of ['grafana-dashboard.json', 'prometheus-alerts.yml']) {
    const doc = await readFile(new URL(`../../docs/monitoring/${file}`, import.meta.url), 'utf8');
    const used = new Set(
      [...doc.matchAll(/\b(?:gateway|nodejs)_[a-z0-9_]+/g)].map(([name]) => name.replace(/_(bucket|count|sum)$/, '')),
    );
    expect(used.size, file).toBeGreaterThan(5);
    for (const name of used) expect(exported, `${file} uses ${name}`).toContain(name);
  }
});

it("every log line of the filled request's lifecycle carries its request id", () => {
  const { requestId, depositHash, fillHash } = filledRequest!;
  const hashes = new Set([depositHash, fillHash].map((hash) => hash.toLowerCase()));
  // Lines about the request: they name its id, or one of its transactions.
  const about = logLines.filter(
    (line) =>
      line.requestId === requestId ||
      [line.txHash, line.hash].some((hash) => typeof hash === 'string' && hashes.has(hash.toLowerCase())),
  );
  const messages = about.map((line) => line.msg);
  for (const msg of [
    'quote stored',
    'deposit seen',
    'deposit confirmed',
    'transaction broadcast',
    'transaction mined',
    'request status',
  ]) {
    expect(messages, msg).toContain(msg);
  }
  for (const line of about) expect(line.requestId, JSON.stringify(line)).toBe(requestId);
});

it('RPC requests that fail are counted against their chain', async () => {
  // A real outage, not a fake: chain C's anvil is killed; the deposit watcher and the scrape's balance reads fail.
  const chainC = gateway.devnet.descriptor.chains[2]!;
  const id = String(chainC.chainId);
  expect(valueOf(await scrape(), 'gateway_rpc_errors_total', { chain_id: id }) ?? 0).toBe(0);
  process.kill(gateway.devnet.pids[2]!, 'SIGKILL');
  await expect
    .poll(async () => valueOf(await scrape(), 'gateway_rpc_errors_total', { chain_id: id }) ?? 0, { timeout: 10_000 })
    .toBeGreaterThan(0);
  expect(valueOf(await scrape(), 'gateway_rpc_errors_total', { chain_id: String(chainA.chainId) }) ?? 0).toBe(0);
});
