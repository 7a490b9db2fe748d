import { beforeEach, describe, expect, it } from 'vitest';
import {
  drawSponsorship,
  getApiKey,
  getApiKeyByHash,
  insertApiKey,
  returnSponsorship,
  revokeApiKey,
  updateApiKey,
} from '../../src/store/apiKeys.repository.js';
import { getCursor, setCursor } from '../../src/store/cursors.repository.js';
import {
  confirmDepositsAtBlocks,
  getDeposit,
  insertDeposit,
  insertDeposits,
  listDepositsForRequest,
  updateDepositStatus,
  type InsertDepositParameters,
} from '../../src/store/deposits.repository.js';
import { isUniqueViolation } from '../../src/store/errors.js';
import { depositRules } from '../../src/core/ledger/movements.js';
import { insertRequest } from '../../src/store/requests.repository.js';
import { listLedgerEntries } from '../../src/store/ledger.repository.js';
import {
  getLiveOutgoingTx,
  findOutgoingTxsByHashes,
  getOutgoingTx,
  insertOutgoingTx,
  listLiveOutgoingTxs,
  markOutgoingTxsBroadcast,
  outgoingTxRequestKindKey,
  outgoingTxSignerNonceKey,
  updateOutgoingTx,
  type InsertOutgoingTxParameters,
} from '../../src/store/outgoingTxs.repository.js';
import { testDatabaseKinds, truncateAll, useTestDatabase } from '../helpers/db.js';
import { hex32, newRequest } from './requestFixture.js';

const solver = '0x5015e00000000000000000000000000000000005';

/** The core's rule of a deposit's receipt, which confirming a deposit books. */
const received = depositRules.received;
describe.each(testDatabaseKinds)('solver state (%s)', (kind) => {
  const database = useTestDatabase(kind);
  beforeEach(() => truncateAll(database()));

  describe('chain cursors', () => {
    it('is undefined before the first set, then upserts per (chain, name)', async () => {
      const { db } = database();
      expect(await getCursor(db, 8453, 'deposits')).toBeUndefined();

      const first = await setCursor(db, {
        chainId: 8453,
        name: 'deposits',
        blockNumber: 100n,
        blockHash: hex32(100),
        now: 1,
      });
      expect(first).toEqual({
        chainId: 8453,
        name: 'deposits',
        blockNumber: 100n,
        blockHash: hex32(100),
        updatedAt: 1,
      });
      const moved = await setCursor(db, {
        chainId: 8453,
        name: 'deposits',
        blockNumber: 2n ** 62n,
        blockHash: hex32(101),
        now: 2,
      });
      expect(await getCursor(db, 8453, 'deposits')).toEqual(moved);
      expect(moved.blockNumber).toBe(2n ** 62n);
      // Rewinding after a reorg is allowed.
      await setCursor(db, { chainId: 8453, name: 'deposits', blockNumber: 90n, blockHash: hex32(90), now: 3 });
      expect((await getCursor(db, 8453, 'deposits'))?.blockNumber).toBe(90n);

      // Another name or chain is another cursor.
      await setCursor(db, { chainId: 8453, name: 'fills', blockNumber: 5n, blockHash: hex32(5), now: 4 });
      await setCursor(db, { chainId: 11_297_108_109, name: 'deposits', blockNumber: 7n, blockHash: hex32(7), now: 5 });
      expect((await getCursor(db, 8453, 'deposits'))?.blockNumber).toBe(90n);
      expect((await getCursor(db, 8453, 'fills'))?.blockNumber).toBe(5n);
      expect(await getCursor(db, 11_297_108_109, 'deposits')).toMatchObject({
        chainId: 11_297_108_109,
        blockNumber: 7n,
      });
    });
  });

  describe('deposits', () => {
    const deposit = (overrides: Partial<InsertDepositParameters> = {}): InsertDepositParameters => ({
      chainId: 31337,
      txHash: hex32(0xd1),
      logIndex: 3,
      blockNumber: 12n,
      blockHash: hex32(0xb12),
      requestId: hex32(1),
      depositor: '0x1111111111111111111111111111111111111111',
      token: '0x0000000000000000000000000000000000000000',
      amount: 2n ** 128n + 7n,
      depositIndex: 2n ** 70n,
      now: 100,
      ...overrides,
    });

    it('records a log once: re-reading it returns the stored row', async () => {
      const { db } = database();
      const first = await insertDeposit(db, deposit());
      expect(first.inserted).toBe(true);
      expect(first.deposit).toMatchObject({
        status: 'seen',
        amount: 2n ** 128n + 7n,
        depositIndex: 2n ** 70n,
        blockNumber: 12n,
      });
      expect(await getDeposit(db, first.deposit.id)).toEqual(first.deposit);

      const again = await insertDeposit(
        db,
        deposit({ txHash: hex32(0xd1).toUpperCase().replace('0X', '0x'), now: 200 }),
      );
      expect(again).toEqual({ deposit: first.deposit, inserted: false });

      // Another log of the same transaction is another deposit.
      const second = await insertDeposit(db, deposit({ logIndex: 4, depositIndex: null }));
      expect(second.inserted).toBe(true);
      expect(second.deposit.depositIndex).toBeNull();
      expect((await listDepositsForRequest(db, hex32(1))).map((d) => d.id)).toEqual([
        first.deposit.id,
        second.deposit.id,
      ]);
    });

    it('enforces one row per (chain, tx, log) at the database', async () => {
      const { db } = database();
      await insertDeposit(db, deposit());
      const error = await db
        .insertInto('deposits')
        .values({
          chain_id: 31337,
          tx_hash: hex32(0xd1),
          log_index: 3,
          block_number: 13,
          block_hash: hex32(0xb13),
          request_id: hex32(1),
          depositor: '0x1111111111111111111111111111111111111111',
          token: '0x0000000000000000000000000000000000000000',
          amount: '1',
          status: 'seen',
          created_at: 1,
          updated_at: 1,
        })
        .execute()
        .catch((e: unknown) => e);
      expect(isUniqueViolation(error, 'deposits_chain_tx_log_key')).toBe(true);
    });

    it('moves through statuses, guarded by the expected one', async () => {
      const { db } = database();
      const { deposit: d } = await insertDeposit(db, deposit());
      expect(
        await updateDepositStatus(db, d.id, { status: 'confirmed', fromStatus: 'seen', now: 150, received }),
      ).toMatchObject({
        status: 'confirmed',
        updatedAt: 150,
      });
      expect(
        await updateDepositStatus(db, d.id, { status: 'confirmed', fromStatus: 'seen', now: 160, received }),
      ).toBeNull();
      expect(await updateDepositStatus(db, d.id, { status: 'consumed', now: 170 })).toMatchObject({
        status: 'consumed',
      });
      await expect(updateDepositStatus(db, d.id, { status: 'bogus' as never, now: 180 })).rejects.toThrow(
        /deposits_status_check/,
      );
    });

    it('records several logs in one statement; the ones already recorded are returned as stored', async () => {
      const { db } = database();
      const known = (await insertDeposit(db, deposit({ logIndex: 2 }))).deposit;
      const results = await insertDeposits(db, [
        deposit({ logIndex: 1, requestId: hex32(11), now: 300 }),
        deposit({ logIndex: 2, now: 300 }),
        deposit({ logIndex: 3, requestId: hex32(13), depositIndex: null, now: 300 }),
      ]);
      expect(results.map((r) => r.inserted)).toEqual([true, false, true]);
      expect(results[1]!.deposit).toEqual(known);
      expect(results[0]!.deposit).toMatchObject({ logIndex: 1, requestId: hex32(11), status: 'seen', createdAt: 300 });
      expect(results[2]!.deposit).toMatchObject({ logIndex: 3, requestId: hex32(13), depositIndex: null });
      expect(await getDeposit(db, results[2]!.deposit.id)).toEqual(results[2]!.deposit);
      // Read again (a range read twice): nothing new.
      const again = await insertDeposits(db, [deposit({ logIndex: 1 }), deposit({ logIndex: 3 })]);
      expect(again.map((r) => [r.inserted, r.deposit.id])).toEqual([
        [false, results[0]!.deposit.id],
        [false, results[2]!.deposit.id],
      ]);
      expect(await insertDeposits(db, [])).toEqual([]);
    });

    it('confirms several deposits in one statement, each only while still seen in the block its caller checked', async () => {
      const { db } = database();
      // d1's request exists (its record is handed on with it, its movement names it); the others' do not.
      const request = await insertRequest(db, newRequest({ id: hex32(1) }));
      const inserted = await Promise.all(
        [5, 1, 2, 3].map(
          async (logIndex) => (await insertDeposit(db, deposit({ logIndex, requestId: hex32(logIndex) }))).deposit,
        ),
      );
      const [d5, d1, d2, d3] = inserted as [
        (typeof inserted)[number],
        (typeof inserted)[number],
        (typeof inserted)[number],
        (typeof inserted)[number],
      ];
      // d2 was confirmed already (by another pass), d3 is named with a block hash it no longer has.
      await updateDepositStatus(db, d2.id, { status: 'confirmed', fromStatus: 'seen', now: 110, received });
      const confirmed = await confirmDepositsAtBlocks(
        db,
        [
          d5,
          d2,
          { ...d3, blockHash: hex32(0xb99) },
          { ...d1, blockHash: d1.blockHash.toUpperCase().replace('0X', '0x') },
        ],
        150,
        received,
      );
      // Block and log order, whatever the order asked.
      expect(confirmed.map(({ deposit: d }) => d.id)).toEqual([d1.id, d5.id]);
      expect(confirmed.every(({ deposit: d }) => d.status === 'confirmed' && d.updatedAt === 150)).toBe(true);
      expect(confirmed.map((c) => c.request)).toEqual([request, undefined]);
      expect(await getDeposit(db, d3.id)).toMatchObject({ status: 'seen' });
      expect(await getDeposit(db, d2.id)).toMatchObject({ status: 'confirmed', updatedAt: 110 });
      // One received movement (two entries) per deposit confirmed, with the one confirmed before; none for d3.
      const entries = await listLedgerEntries(db);
      const keys = entries.map((entry) => entry.movementKey);
      for (const d of [d1, d2, d5]) expect(keys.filter((key) => key.endsWith(`:${d.logIndex}`))).toHaveLength(2);
      expect(keys).toHaveLength(6);
      const ofD1 = entries.filter((entry) => entry.movementKey.endsWith(`:${d1.logIndex}`));
      expect(ofD1.map((entry) => [entry.account, entry.amount, entry.requestId, entry.createdAt])).toEqual(
        expect.arrayContaining([
          ['depository', d1.amount, request.id, 150],
          ['counterparty', -d1.amount, request.id, 150],
        ]),
      );
      // Nothing left to confirm: a second call (another pass, another instance) moves nothing, writes nothing.
      expect(await confirmDepositsAtBlocks(db, [d1, d5], 160, received)).toEqual([]);
      expect(await listLedgerEntries(db)).toHaveLength(6);
      expect(await confirmDepositsAtBlocks(db, [], 170, received)).toEqual([]);
      // A backfill's worth (more than one statement's 64): all confirmed, each with its movement.
      const many = (
        await insertDeposits(
          db,
          Array.from({ length: 70 }, (_, index) => deposit({ txHash: hex32(0xe000 + index), logIndex: 0 })),
        )
      ).map((result) => result.deposit);
      const all = await confirmDepositsAtBlocks(db, many, 180, received);
      expect(all.map(({ deposit: d }) => d.id).sort((a, b) => a - b)).toEqual(
        many.map((d) => d.id).sort((a, b) => a - b),
      );
      expect(await listLedgerEntries(db)).toHaveLength(6 + 140);
    });
  });

  describe('outgoing transactions', () => {
    const fill = (overrides: Partial<InsertOutgoingTxParameters> = {}): InsertOutgoingTxParameters => ({
      chainId: 31338,
      requestId: hex32(7),
      kind: 'fill',
      signer: solver,
      payload: { to: '0x00000000000000000000000000000000000000f1', data: '0x', value: '0' },
      now: 100,
      ...overrides,
    });

    it('rejects a second live fill for the same request, at the database', async () => {
      const { db } = database();
      const first = await insertOutgoingTx(db, fill());
      expect(first).toMatchObject({ status: 'prepared', nonce: null, hashes: [], kind: 'fill' });
      expect(await getOutgoingTx(db, first.id)).toEqual(first);

      const error = await insertOutgoingTx(db, fill({ signer: '0x5015e00000000000000000000000000000000006' })).catch(
        (e: unknown) => e,
      );
      expect(isUniqueViolation(error, outgoingTxRequestKindKey)).toBe(true);

      // Racing inserts: exactly one wins, whatever the interleaving.
      const racing = await Promise.allSettled([
        insertOutgoingTx(db, fill({ requestId: hex32(8) })),
        insertOutgoingTx(db, fill({ requestId: hex32(8) })),
      ]);
      expect(racing.filter((r) => r.status === 'fulfilled')).toHaveLength(1);

      // A refund of the same request is a different slot.
      await insertOutgoingTx(db, fill({ kind: 'refund', chainId: 31337 }));
      // Only a fill explicitly marked replaced frees the slot for another.
      await updateOutgoingTx(db, first.id, { status: 'replaced', now: 200 });
      const second = await insertOutgoingTx(db, fill({ now: 300 }));
      expect(await getLiveOutgoingTx(db, hex32(7), 'fill')).toEqual(second);
    });

    it('keeps a failed fill in the slot (no silent retry)', async () => {
      const { db } = database();
      const first = await insertOutgoingTx(db, fill());
      await updateOutgoingTx(db, first.id, { status: 'failed', now: 200 });
      const error = await insertOutgoingTx(db, fill()).catch((e: unknown) => e);
      expect(isUniqueViolation(error, outgoingTxRequestKindKey)).toBe(true);
    });

    it('records nonce and broadcast hashes; gas bumps append without duplicates', async () => {
      const { db } = database();
      const tx = await insertOutgoingTx(db, fill());
      const sent = await updateOutgoingTx(db, tx.id, {
        status: 'broadcast',
        fromStatus: 'prepared',
        nonce: 2n ** 40n,
        hash: hex32(0xe1),
        now: 110,
      });
      expect(sent).toMatchObject({ status: 'broadcast', nonce: 2n ** 40n, hashes: [hex32(0xe1)], updatedAt: 110 });
      await updateOutgoingTx(db, tx.id, { status: 'broadcast', hash: hex32(0xe2), now: 120 });
      const bumped = await updateOutgoingTx(db, tx.id, { status: 'broadcast', hash: hex32(0xe2), now: 130 });
      expect(bumped?.hashes).toEqual([hex32(0xe1), hex32(0xe2)]);
      expect(await updateOutgoingTx(db, tx.id, { status: 'confirmed', fromStatus: 'prepared', now: 140 })).toBeNull();
      expect(
        await updateOutgoingTx(db, tx.id, { status: 'confirmed', fromStatus: 'broadcast', now: 150 }),
      ).toMatchObject({
        status: 'confirmed',
      });
    });

    it('marks several accepted rows broadcast in one statement, each with its hash and time, only while prepared', async () => {
      const { db } = database();
      const a = await insertOutgoingTx(db, fill({ requestId: hex32(31), status: 'prepared', nonce: 1n }));
      const b = await insertOutgoingTx(db, fill({ requestId: hex32(32), status: 'prepared', nonce: 2n }));
      // Already moved on (a receipt wait marked it first): left as it is.
      const c = await insertOutgoingTx(db, fill({ requestId: hex32(33), status: 'prepared', nonce: 3n }));
      await updateOutgoingTx(db, c.id, { status: 'broadcast', fromStatus: 'prepared', hash: hex32(0xc3), now: 105 });
      // Its hash already recorded: not appended twice.
      await updateOutgoingTx(db, b.id, { status: 'prepared', hash: hex32(0xb2), now: 101 });

      const moved = await markOutgoingTxsBroadcast(db, [
        { id: a.id, hash: hex32(0xa1).toUpperCase().replace('0X', '0x'), now: 110 },
        { id: b.id, hash: hex32(0xb2), now: 111 },
        { id: c.id, hash: hex32(0xc4), now: 112 },
      ]);
      expect(moved.sort((x, y) => x - y)).toEqual([a.id, b.id].sort((x, y) => x - y));
      expect(await getOutgoingTx(db, a.id)).toMatchObject({
        status: 'broadcast',
        hashes: [hex32(0xa1)],
        updatedAt: 110,
      });
      expect(await getOutgoingTx(db, b.id)).toMatchObject({
        status: 'broadcast',
        hashes: [hex32(0xb2)],
        updatedAt: 111,
      });
      expect(await getOutgoingTx(db, c.id)).toMatchObject({
        status: 'broadcast',
        hashes: [hex32(0xc3)],
        updatedAt: 105,
      });
      expect(await markOutgoingTxsBroadcast(db, [])).toEqual([]);
    });

    it('rejects two live transactions of one signer with the same nonce', async () => {
      const { db } = database();
      await insertOutgoingTx(db, fill({ nonce: 5n }));
      const error = await insertOutgoingTx(db, fill({ requestId: hex32(9), kind: 'refund', nonce: 5n })).catch(
        (e: unknown) => e,
      );
      expect(isUniqueViolation(error, outgoingTxSignerNonceKey)).toBe(true);
      // Another signer, or another chain, may use the same nonce.
      const otherSigner = '0x5015e00000000000000000000000000000000006';
      await insertOutgoingTx(db, fill({ requestId: hex32(9), signer: otherSigner, nonce: 5n }));
      await insertOutgoingTx(db, fill({ requestId: hex32(10), chainId: 1, nonce: 5n }));
    });

    it('reads a page of requests at once: live fills and refunds, and the first transaction of each hash', async () => {
      const { db } = database();
      const broadcast = async (params: InsertOutgoingTxParameters, hashes: string[]) => {
        const tx = await insertOutgoingTx(db, params);
        for (const hash of hashes) await updateOutgoingTx(db, tx.id, { status: 'broadcast', hash, now: 150 });
        return (await getOutgoingTx(db, tx.id))!;
      };
      const replaced = await broadcast(fill({ requestId: hex32(21) }), [hex32(101)]);
      await updateOutgoingTx(db, replaced.id, { status: 'replaced', now: 200 });
      const live = await broadcast(fill({ requestId: hex32(21), now: 300 }), [hex32(101), hex32(102)]);
      const refund = await broadcast(fill({ requestId: hex32(22), kind: 'refund', chainId: 31337 }), [hex32(0xab)]);
      await broadcast(fill({ requestId: hex32(23) }), [hex32(104)]);

      const page = await listLiveOutgoingTxs(db, [hex32(21), hex32(22), hex32(24)], ['fill', 'refund']);
      expect(page.map((tx) => tx.id).sort()).toEqual([live.id, refund.id].sort());
      expect(await listLiveOutgoingTxs(db, [hex32(21)], ['refund'])).toEqual([]);
      expect(await listLiveOutgoingTxs(db, [], ['fill'])).toEqual([]);

      // A hash both the replaced and the live fill broadcast belongs to the first; upper case is found too.
      const byHash = await findOutgoingTxsByHashes(db, [
        hex32(101),
        hex32(0xab).toUpperCase().replace('0X', '0x'),
        hex32(199),
      ]);
      expect([...byHash.keys()].sort()).toEqual([hex32(101), hex32(0xab)]);
      expect(byHash.get(hex32(101))!.id).toBe(replaced.id);
      expect(byHash.get(hex32(0xab))!.id).toBe(refund.id);
      expect(await findOutgoingTxsByHashes(db, [])).toEqual(new Map());
    });
  });

  describe('api keys', () => {
    it('stores, finds by hash, rejects a duplicate hash, and revokes once', async () => {
      const { db } = database();
      const key = await insertApiKey(db, {
        id: 'key-1',
        name: 'My app',
        keyHash: 'sha256:abc',
        sponsorshipEnabled: true,
        limits: { requestsPerMinute: 600 },
        webhook: { url: 'https://example.com/hook', headers: { 'x-custom': '1' }, enabled: true },
        businessVerified: true,
        payoutAddress: '0x00000000000000000000000000000000000000aa',
        now: 100,
      });
      expect(key).toEqual({
        id: 'key-1',
        name: 'My app',
        keyHash: 'sha256:abc',
        sponsorshipEnabled: true,
        limits: { requestsPerMinute: 600 },
        webhook: { url: 'https://example.com/hook', headers: { 'x-custom': '1' }, enabled: true },
        createdAt: 100,
        revokedAt: null,
        businessVerified: true,
        payoutAddress: '0x00000000000000000000000000000000000000aa',
        // No secret was given: the key's webhook cannot be signed until one is sealed (`webhookSigning`).
        webhookSecret: null,
        // Nothing is sponsored until the administrator sets an allowance.
        sponsorshipAllowanceUsdMicros: 0n,
        sponsorshipSpentUsdMicros: 0n,
        sponsorshipReservedUsdMicros: 0n,
      });
      expect(await getApiKeyByHash(db, 'sha256:abc')).toEqual(key);
      expect(await getApiKey(db, 'key-1')).toEqual(key);
      expect(await getApiKeyByHash(db, 'sha256:nope')).toBeUndefined();

      const plain = await insertApiKey(db, { id: 'key-2', name: 'Other', keyHash: 'sha256:def', now: 100 });
      expect(plain).toMatchObject({
        sponsorshipEnabled: false,
        limits: {},
        webhook: null,
        businessVerified: false,
        payoutAddress: null,
      });

      const error = await insertApiKey(db, { id: 'key-3', name: 'Dup', keyHash: 'sha256:abc', now: 100 }).catch(
        (e: unknown) => e,
      );
      expect(isUniqueViolation(error, 'api_keys_key_hash_key')).toBe(true);

      expect((await revokeApiKey(db, 'key-1', 200))?.revokedAt).toBe(200);
      expect((await revokeApiKey(db, 'key-1', 300))?.revokedAt).toBe(200);
      expect(await revokeApiKey(db, 'missing', 300)).toBeUndefined();
    });

    it('draws sponsorship atomically: concurrent draws never take a key past its allowance', async () => {
      const { db } = database();
      await insertApiKey(db, {
        id: 'sponsor',
        name: 'Sponsor',
        keyHash: 'sha256:sponsor',
        sponsorshipEnabled: true,
        sponsorshipAllowanceUsdMicros: 1_000n,
        now: 100,
      });
      // Ten draws of 300 at once (on PostgreSQL each on its own pooled connection): three fit in 1000.
      const draws = await Promise.all(
        Array.from({ length: 10 }, () => db.transaction().execute((trx) => drawSponsorship(trx, 'sponsor', 300n))),
      );
      expect(draws.filter((left) => left !== null).sort()).toEqual([100n, 400n, 700n]);
      expect(await getApiKey(db, 'sponsor')).toMatchObject({
        sponsorshipAllowanceUsdMicros: 1_000n,
        sponsorshipSpentUsdMicros: 900n,
      });
      // Exactly the rest still fits; one more micro-USD does not.
      expect(await drawSponsorship(db, 'sponsor', 101n)).toBeNull();
      expect(await drawSponsorship(db, 'sponsor', 100n)).toBe(0n);
      // A returned draw is available again; raising the allowance tops the key up.
      await returnSponsorship(db, 'sponsor', 300n);
      expect(await drawSponsorship(db, 'sponsor', 300n)).toBe(0n);
      await updateApiKey(db, 'sponsor', { sponsorshipAllowanceUsdMicros: 1_500n });
      expect(await drawSponsorship(db, 'sponsor', 500n)).toBe(0n);
      // Keys with sponsorship off, revoked keys and unknown keys pay nothing.
      await updateApiKey(db, 'sponsor', { sponsorshipAllowanceUsdMicros: 10_000n, sponsorshipEnabled: false });
      expect(await drawSponsorship(db, 'sponsor', 1n)).toBeNull();
      await updateApiKey(db, 'sponsor', { sponsorshipEnabled: true });
      await revokeApiKey(db, 'sponsor', 200);
      expect(await drawSponsorship(db, 'sponsor', 1n)).toBeNull();
      expect(await drawSponsorship(db, 'missing', 1n)).toBeNull();
      expect((await getApiKey(db, 'sponsor'))!.sponsorshipSpentUsdMicros).toBe(1_500n);
    });
  });
});
