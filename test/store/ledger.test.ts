/**
 * The ledger as the status changes write it: a deposit confirmed, a request filled, a refund and its gas mined.
 * The core's rules (`src/core/ledger/movements.ts`) say what each books; the store writes it with the change. Each
 * movement commits with its status change, is written once however often the change is repeated, and every
 * currency sums to zero.
 */
import { encodeFunctionData, zeroAddress, type Address, type Hex } from 'viem';
import { beforeEach, describe, expect, it } from 'vitest';
import { receiptL1Fee } from '../../src/chain/sender/receipts.js';
import { depositoryAbi } from '../../src/core/abi.js';
import {
  depositRules,
  inputValuation,
  openingBalance,
  quotedRequestOf,
  requestFilled,
  type FillFacts,
} from '../../src/core/ledger/movements.js';
import { minedTxMovements, sentTxFactsJson } from '../../src/core/ledger/sentTxFacts.js';
import { statusChangeOf, writeStatusChange } from '../../src/core/status/statusChange.js';
import { insertDeposit, updateDepositStatus } from '../../src/store/deposits.repository.js';
import {
  insertLedgerMovements,
  ledgerBalances,
  ledgerImbalances,
  listLedgerEntries,
} from '../../src/store/ledger.repository.js';
import { insertOutgoingTx, updateOutgoingTx } from '../../src/store/outgoingTxs.repository.js';
import { getRequest, insertRequest, updateRequestStatus } from '../../src/store/requests.repository.js';
import type { Kysely, KyselyPlugin } from 'kysely';
import { listEventsForRequest } from '../../src/store/requestEvents.repository.js';
import type { Tables } from '../../src/store/tables.js';
import { testDatabaseKinds, truncateAll, useTestDatabase } from '../helpers/db.js';
import { hex32, newRequest } from './requestFixture.js';
import type { RequestRecord } from '../../src/records/request.js';

const usdc = '0x00000000000000000000000000000000000005dc';
const app = '0xaaaa00000000000000000000000000000000000a';
const solver = '0x5015e00000000000000000000000000000000005';

/** A USDC -> ETH swap's stored fees, in the shape `getQuote` stores (amounts in USDC's 6 decimals). */
const feesQuoted = {
  currency: { chainId: 31337, address: usdc, decimals: 6, symbol: 'USDC' },
  routeClass: 'swap',
  execution: '20000',
  executionParts: { destinationGasMicros: '5000' },
  swap: '3000',
  platform: '1000',
  platformBps: 1,
  app: '100000',
  appFees: [{ recipient: app, feeBps: 100, amount: '100000' }],
  sponsored: '0',
  usdMicros: {
    in: '10000000',
    out: '9876000',
    execution: '20000',
    swap: '3000',
    platform: '1000',
    app: '100000',
    sponsored: '0',
  },
};

/** What the fill of `request` paid, as the solver's fill states it: the output, from its wallet, to the recipient. */
const fillOf = (request: RequestRecord): FillFacts => ({
  request: quotedRequestOf(request),
  paid: {
    chainId: request.destinationChainId,
    currency: request.destinationCurrency,
    amount: request.amountOut,
    to: request.recipient,
  },
  gasTopup: 0n,
});

describe.each(testDatabaseKinds)('ledger (%s)', (kind) => {
  const database = useTestDatabase(kind);
  beforeEach(() => truncateAll(database()));

  async function swapRequest() {
    return insertRequest(
      database().db,
      newRequest({
        originCurrency: usdc,
        destinationCurrency: zeroAddress,
        amountIn: 10_000_000n,
        amountOut: 3_292_000_000_000_000n,
        feesQuoted,
      }),
    );
  }

  async function confirmedDeposit(
    db: Kysely<Tables>,
    requestId: string,
    amount: bigint,
    depositIndex: bigint | null = 4n,
  ) {
    const { deposit } = await insertDeposit(db, {
      chainId: 31337,
      txHash: hex32(0xd0 + Number(amount % 1000n)),
      logIndex: 0,
      blockNumber: 10n,
      blockHash: hex32(0xb10),
      requestId,
      depositor: '0x1111111111111111111111111111111111111111',
      token: usdc,
      amount,
      depositIndex,
      now: 1,
    });
    return (await updateDepositStatus(db, deposit.id, {
      status: 'confirmed',
      fromStatus: 'seen',
      now: 2,
      received: depositRules.received,
    }))!;
  }

  const balance = async (db: Kysely<Tables>, account: string, chainId: number, currency: string) =>
    (await ledgerBalances(db)).find((b) => b.account === account && b.chainId === chainId && b.currency === currency)
      ?.amount ?? 0n;

  it('a filled request: deposit, fees, app fee, exchange and payout; the user nets to zero, every currency balances', async () => {
    const { db } = database();
    const request = await swapRequest();
    const deposit = await confirmedDeposit(db, request.id, 10_000_000n);
    expect(await balance(db, 'depository', 31337, usdc)).toBe(10_000_000n);
    expect(await balance(db, 'counterparty', 31337, usdc)).toBe(-10_000_000n);

    await updateRequestStatus(db, request.id, {
      status: 'pending',
      fromStatus: 'waiting',
      inTxHash: deposit.txHash,
      now: 3,
    });
    await updateRequestStatus(db, request.id, {
      status: 'submitted',
      fromStatus: 'pending',
      txHash: hex32(0xf1),
      now: 4,
    });
    await updateRequestStatus(db, request.id, {
      status: 'success',
      fromStatus: ['pending', 'submitted'],
      ledger: requestFilled(fillOf(request)),
      now: 5,
    });

    expect(await ledgerImbalances(db)).toEqual({ currencies: [], movements: [] });
    expect(await balance(db, 'counterparty', 31337, usdc)).toBe(0n);
    expect(await balance(db, 'counterparty', 31338, zeroAddress)).toBe(0n);
    expect(await balance(db, 'solver', 31338, zeroAddress)).toBe(-3_292_000_000_000_000n);
    expect(await balance(db, `app:${app}`, 31337, usdc)).toBe(-100_000n);
    expect(await balance(db, 'revenue:execution', 31337, usdc)).toBe(-20_000n);
    expect(await balance(db, 'revenue:swap', 31337, usdc)).toBe(-3_000n);
    expect(await balance(db, 'revenue:platform', 31337, usdc)).toBe(-1_000n);
    expect(await balance(db, 'trade', 31337, usdc)).toBe(-(10_000_000n - 124_000n));
    // Each entry carries its USD value: the app fee's is the quote's.
    const appEntry = (await listLedgerEntries(db, { account: `app:${app}` }))[0]!;
    expect(appEntry).toMatchObject({
      kind: 'app_fee_accrued',
      amount: -100_000n,
      usdMicros: -100_000n,
      requestId: request.id,
    });
  });

  it('repeating a status change or a movement writes nothing twice', async () => {
    const { db } = database();
    const request = await swapRequest();
    const deposit = await confirmedDeposit(db, request.id, 10_000_000n);
    // The deposit confirmed again (a second watcher instance) is refused by its status, and a forced write by its key.
    expect(
      await updateDepositStatus(db, deposit.id, {
        status: 'confirmed',
        fromStatus: 'seen',
        now: 9,
        received: depositRules.received,
      }),
    ).toBeNull();
    await updateRequestStatus(db, request.id, { status: 'pending', fromStatus: 'waiting', now: 3 });
    await updateRequestStatus(db, request.id, {
      status: 'success',
      fromStatus: 'pending',
      ledger: requestFilled(fillOf(request)),
      now: 5,
    });
    const count = (await listLedgerEntries(db)).length;
    // A recovery that sets `success` again without a guard, and the movements written directly once more.
    await updateRequestStatus(db, request.id, { status: 'success', ledger: requestFilled(fillOf(request)), now: 6 });
    expect(await insertLedgerMovements(db, requestFilled(fillOf((await getRequest(db, request.id))!)), 7)).toBe(0);
    expect((await listLedgerEntries(db)).length).toBe(count);
    expect(await ledgerImbalances(db)).toEqual({ currencies: [], movements: [] });
  });

  it("a fill's success is one statement: the row moved, its event and its ledger movements", async () => {
    const { db } = database();
    const request = await swapRequest();
    await updateRequestStatus(db, request.id, { status: 'pending', fromStatus: 'waiting', now: 3 });
    // Counted by their results: a statement that embeds a query builder transforms its node more than once.
    let statements = 0;
    const counting: KyselyPlugin = {
      transformQuery: ({ node }) => node,
      transformResult: ({ result }) => {
        statements++;
        return Promise.resolve(result);
      },
    };
    const ledger = requestFilled(fillOf(request));
    // The change as the core builds it from the row as read (`statusChangeOf`): its event goes in its statement.
    const read = (await getRequest(db, request.id))!;
    const moved = await db
      .transaction()
      .execute((trx) =>
        writeStatusChange(trx.withPlugin(counting), statusChangeOf(read, 'succeed', { fill: fillOf(request) }, 5)),
      );
    expect(moved).toMatchObject({ status: 'success' });
    expect(statements).toBe(1);
    expect((await listEventsForRequest(db, request.id)).map((event) => event.status)).toEqual(['pending', 'success']);
    expect(await listLedgerEntries(db, { requestId: request.id })).toHaveLength(2 * ledger.length);
    // A change that did not apply (the request moved on) books nothing.
    const other = await swapRequest();
    await updateRequestStatus(db, other.id, {
      status: 'success',
      fromStatus: 'pending',
      ledger: requestFilled(fillOf(other)),
      now: 6,
    });
    expect(await listLedgerEntries(db, { requestId: other.id })).toEqual([]);
  });

  it('a status change rolled back (a crash before commit) leaves no entry; the entry commits with the status', async () => {
    const { db } = database();
    const request = await swapRequest();
    await updateRequestStatus(db, request.id, { status: 'pending', fromStatus: 'waiting', now: 3 });
    await expect(
      db.transaction().execute(async (trx) => {
        await updateRequestStatus(trx, request.id, {
          status: 'success',
          fromStatus: 'pending',
          ledger: requestFilled(fillOf(request)),
          now: 5,
        });
        throw new Error('crash before commit');
      }),
    ).rejects.toThrow('crash before commit');
    expect((await getRequest(db, request.id))!.status).toBe('pending');
    expect(await listLedgerEntries(db, { requestId: request.id })).toEqual([]);
    await updateRequestStatus(db, request.id, {
      status: 'success',
      fromStatus: 'pending',
      ledger: requestFilled(fillOf(request)),
      now: 6,
    });
    expect((await listLedgerEntries(db, { requestId: request.id })).length).toBeGreaterThan(0);
  });

  it('a refund mined: paid back from the depository, its gas kept as unallocated, the solver pays the gas', async () => {
    const { db } = database();
    const request = await swapRequest();
    const deposit = await confirmedDeposit(db, request.id, 9_000_000n);
    await updateRequestStatus(db, request.id, {
      status: 'pending',
      fromStatus: 'waiting',
      inTxHash: deposit.txHash,
      now: 3,
    });
    const data = encodeFunctionData({
      abi: depositoryAbi,
      functionName: 'release',
      args: [
        4n,
        request.id as Hex,
        deposit.depositor as Address,
        usdc,
        9_000_000n,
        request.refundTo as Address,
        8_950_000n,
      ],
    });
    const tx = await insertOutgoingTx(db, {
      chainId: 31337,
      requestId: request.id,
      kind: 'refund',
      signer: solver,
      nonce: 0n,
      status: 'broadcast',
      // The refund's facts as the solver sends it (`refund.ts`): what the ledger books, whatever the call's encoding.
      payload: {
        to: hex32(9).slice(0, 42),
        data,
        value: '0',
        ledger: sentTxFactsJson({
          kind: 'refund',
          refund: {
            requestId: request.id,
            from: 'depository',
            currency: usdc,
            paid: 8_950_000n,
            depositAmount: 9_000_000n,
            valuation: inputValuation(quotedRequestOf(request), 31337, usdc),
          },
        }),
      },
      now: 4,
    });
    const receipt = {
      status: 'success' as const,
      hash: hex32(0xe1),
      gasUsed: 60_000n,
      effectiveGasPrice: 1_000_000_000n,
    };
    const mined = { hash: receipt.hash, movements: minedTxMovements(tx, receipt, null) };
    await updateOutgoingTx(db, tx.id, { status: 'confirmed', hash: receipt.hash, receipt: mined, now: 5 });
    // The sender finishing again after a restart writes nothing more.
    await updateOutgoingTx(db, tx.id, { status: 'confirmed', hash: receipt.hash, receipt: mined, now: 6 });
    await updateRequestStatus(db, request.id, {
      status: 'refund',
      fromStatus: 'pending',
      failReason: 'DEPOSITED_AMOUNT_TOO_LOW_TO_FILL',
      now: 7,
    });

    expect(await ledgerImbalances(db)).toEqual({ currencies: [], movements: [] });
    expect(await balance(db, 'counterparty', 31337, usdc)).toBe(0n);
    expect(await balance(db, 'depository', 31337, usdc)).toBe(0n);
    expect(await balance(db, 'depository:unallocated', 31337, usdc)).toBe(50_000n);
    expect(await balance(db, 'revenue:refund', 31337, usdc)).toBe(-50_000n);
    expect(await balance(db, 'solver', 31337, zeroAddress)).toBe(-60_000n * 1_000_000_000n);
    expect(await balance(db, 'expense:gas', 31337, zeroAddress)).toBe(60_000n * 1_000_000_000n);
  });

  it("an OP-stack fill's receipt: its L1 data fee is gas the solver spent, with the execution gas", async () => {
    const { db } = database();
    const request = await swapRequest();
    const tx = await insertOutgoingTx(db, {
      chainId: 31339,
      requestId: request.id,
      kind: 'fill',
      signer: solver,
      nonce: 0n,
      status: 'broadcast',
      payload: { to: hex32(9).slice(0, 42), data: '0x', value: '0' },
      now: 4,
    });
    // What the sender reads of an OP-stack node's receipt (`l1Fee`, a hex quantity beside the usual fields).
    const l1Fee = receiptL1Fee({ gasUsed: 60_000n, l1Fee: '0x3b9aca000' });
    expect(l1Fee).toBe(16_000_000_000n);
    const receipt = {
      status: 'success' as const,
      hash: hex32(0xe2),
      gasUsed: 60_000n,
      effectiveGasPrice: 1_000_000n,
      l1Fee: l1Fee!,
    };
    const movements = minedTxMovements(tx, receipt, null);
    await updateOutgoingTx(db, tx.id, {
      status: 'confirmed',
      hash: receipt.hash,
      receipt: { ...receipt, movements },
      now: 5,
    });

    const spent = 60_000n * 1_000_000n + 16_000_000_000n;
    expect(await balance(db, 'solver', 31339, zeroAddress)).toBe(-spent);
    expect(await balance(db, 'expense:gas', 31339, zeroAddress)).toBe(spent);
    expect(await ledgerImbalances(db)).toEqual({ currencies: [], movements: [] });
    // Receipts of other chains carry none; viem's OP-stack formatter hands over a bigint (or null).
    expect(receiptL1Fee({ gasUsed: 1n })).toBeUndefined();
    expect(receiptL1Fee({ l1Fee: null })).toBeUndefined();
    expect(receiptL1Fee({ l1Fee: 7n })).toBe(7n);
  });

  it('an opening balance is written once per chain genesis, in either direction, and even when it is zero', async () => {
    const { db } = database();
    const opening = (difference: bigint, genesisHash = '0xaa') =>
      openingBalance({ chainId: 31337, currency: usdc, genesisHash, difference, usdMicros: difference });
    expect(await insertLedgerMovements(db, [opening(0n)], 1)).toBe(1);
    // Taken: a later (different) difference with the same genesis writes nothing.
    expect(await insertLedgerMovements(db, [opening(700n)], 2)).toBe(0);
    expect(await balance(db, 'solver', 31337, usdc)).toBe(0n);
    // A new genesis (a devnet reset) opens again; a ledger ahead of the chain credits the solver.
    expect(await insertLedgerMovements(db, [opening(-300n, '0xbb')], 3)).toBe(1);
    expect(await balance(db, 'solver', 31337, usdc)).toBe(-300n);
    expect(await balance(db, 'equity:opening', 31337, usdc)).toBe(300n);
    expect(await ledgerImbalances(db)).toEqual({ currencies: [], movements: [] });
    // Zero is allowed for an opening only.
    await expect(insertLedgerMovements(db, [{ ...opening(0n, '0xcc'), kind: 'deposit_received' }], 4)).rejects.toThrow(
      /non-positive/,
    );
  });

  it('the invariant check reports a currency that does not sum to zero and a movement that is not a pair (in amount or USD)', async () => {
    const { db } = database();
    await db
      .insertInto('ledger_entries')
      .values({
        movement_key: 'broken',
        kind: 'deposit_received',
        account: 'depository',
        chain_id: 1,
        currency: usdc,
        amount: '5',
        usd_micros: null,
        request_id: null,
        created_at: 1,
      })
      .execute();
    expect(await ledgerImbalances(db)).toEqual({
      currencies: [{ chainId: 1, currency: usdc, sum: 5n }],
      movements: ['broken'],
    });
    // A pair whose amounts balance but whose USD values do not (one side unvalued) is reported too.
    const entry = {
      movement_key: 'usd-broken',
      kind: 'gas_spent',
      chain_id: 1,
      currency: zeroAddress,
      request_id: null,
      created_at: 1,
    };
    await db
      .insertInto('ledger_entries')
      .values([
        { ...entry, account: 'expense:gas', amount: '7', usd_micros: '3' },
        { ...entry, account: 'solver', amount: '-7', usd_micros: null },
      ])
      .execute();
    expect((await ledgerImbalances(db)).movements.sort()).toEqual(['broken', 'usd-broken']);
  });
});
