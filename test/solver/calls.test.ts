/**
 * Call quotes (`txs`) say what the calls receive (#20 item 6), checked against what the fill does on the
 * devnet: the quote's `details.recipient` and its order's output payment name the multicaller that the fill
 * pays and that runs the calls, `details.currencyOut` is what it receives, and the balances that move on chain
 * match; the solver's attestation of a call request signs that payee and the deployed AttestationVerifier
 * accepts it; a call that reverts only at fill time is refunded with a status naming the call's target and its
 * decoded revert, not the solver's fill contract. Plain payments keep naming the recipient.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestClient,
  createWalletClient,
  encodeFunctionData,
  erc20Abi,
  http,
  pad,
  parseEther,
  parseEventLogs,
  parseUnits,
  zeroAddress,
  type Address,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { getRequest } from '../../src/store/requests.repository.js';
import { attestationVerifierAbi, depositoryAbi, receiverAbi } from '../../generated/contracts/index.js';
import { devnetViemChain, type DevnetAccount, type DevnetChain } from '../../src/chain/devnet.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { executeSteps, publicClientOf, requestQuote, tokenOf, waitForStatus } from '../helpers/quote.js';
import { balanceOf } from '../helpers/chainReads.js';
import { revocablePull } from '../helpers/revertingCall.js';

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;
let alice: DevnetAccount;
let bob: DevnetAccount;

beforeAll(async () => {
  gateway = await startTestGateway();
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
  [alice, bob] = gateway.devnet.descriptor.accounts as [DevnetAccount, DevnetAccount];
}, 120_000);
afterAll(async () => {
  await gateway?.stop();
});

// Fresh addresses above 0xffff: the gateway refuses the low range (precompiles, placeholders) as a recipient.
const fresh = (n: number): Address => `0x${n.toString(16).padStart(40, '0')}`;
const lower = (value: string) => value.toLowerCase();

/** The quote's claims about the output, in one place. */
function claims(q: { details: any; protocol: any }) {
  const payments = q.protocol.v2.orderData.output.payments as Array<{ recipient: string; expectedAmount: string }>;
  expect(payments).toHaveLength(1);
  return {
    recipient: lower(q.details.recipient),
    amountOut: BigInt(q.details.currencyOut.amount),
    paymentRecipient: lower(payments[0]!.recipient),
    paymentAmount: BigInt(payments[0]!.expectedAmount),
  };
}

describe('call quotes describe what the calls receive, and the fill agrees', () => {
  it('native value to a third party: the multicaller is paid exactly currencyOut and passes it to the merchant', async () => {
    const merchant = fresh(0x3e7c4a01);
    const leftoverTo = fresh(0x3e7c4a02);
    const value = parseEther('0.012');
    const q = await requestQuote(gateway, alice, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: value.toString(),
      tradeType: 'EXACT_OUTPUT',
      recipient: leftoverTo,
      txs: [{ to: merchant, value: value.toString(), data: '0x' }],
    });
    const multicaller = lower(chainB.contracts.multicaller);
    expect(claims(q)).toEqual({
      recipient: multicaller,
      amountOut: value,
      paymentRecipient: multicaller,
      paymentAmount: value,
    });
    expect(q.details.operation).toBe('call');
    expect(q.protocol.v2.orderData.output.calls).toHaveLength(1);
    // EXACT_OUTPUT delivers exactly the amount: no output slippage, in value or percent (#20 item 6).
    expect(q.details.slippageTolerance.destination).toMatchObject({ value: '0', percent: '0' });

    await executeSteps(gateway, q.steps, alice);
    const status = await waitForStatus(gateway, q.steps.at(-1)!.requestId, ['success', 'refund', 'failure']);
    expect(status.status).toBe('success');
    // The fill sends the native output along (to the fill contract, which forwards it to the multicaller).
    const fillTx = await publicClientOf(chainB).getTransaction({ hash: status.txHashes[0] as Hex });
    expect(fillTx.value).toBe(value);
    expect(await balanceOf(chainB, zeroAddress, merchant)).toBe(value);
    expect(await balanceOf(chainB, zeroAddress, leftoverTo)).toBe(0n);
    expect(await balanceOf(chainB, zeroAddress, chainB.contracts.multicaller)).toBe(0n);

    // The deprecated listing's metadata (the quote's details) says the same; the request's own `recipient`
    // (what the `recipient` filter matches) stays the quote's, which gets leftover native.
    const listed = await call(gateway.url, 'getRequestsV2', { query: { id: q.steps.at(-1)!.requestId } });
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    const [request] = listed.body.requests;
    expect(lower(request.data.metadata.recipient)).toBe(multicaller);
    expect(BigInt(request.data.metadata.currencyOut.amount)).toBe(value);
    expect(lower(request.recipient)).toBe(lower(leftoverTo));
  });

  it('an ERC-20 transfer to a merchant: Transfer(solver → multicaller, currencyOut) then (multicaller → merchant)', async () => {
    const merchant = fresh(0x3e7c4a03);
    const usdcA = tokenOf(chainA, 'USDC');
    const usdcB = tokenOf(chainB, 'USDC');
    const amount = parseUnits('7.5', 6);
    const q = await requestQuote(gateway, alice, {
      originCurrency: usdcA,
      destinationCurrency: usdcB,
      amount: amount.toString(),
      tradeType: 'EXACT_OUTPUT',
      txs: [
        {
          to: usdcB,
          value: '0',
          data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [merchant, amount] }),
        },
      ],
    });
    const multicaller = lower(chainB.contracts.multicaller);
    expect(claims(q)).toEqual({
      recipient: multicaller,
      amountOut: amount,
      paymentRecipient: multicaller,
      paymentAmount: amount,
    });
    expect(q.details.currencyOut.currency.address.toLowerCase()).toBe(lower(usdcB));
    expect(q.details.slippageTolerance.destination).toMatchObject({ value: '0', percent: '0' });

    await executeSteps(gateway, q.steps, alice);
    const status = await waitForStatus(gateway, q.steps.at(-1)!.requestId, ['success', 'refund', 'failure']);
    expect(status.status).toBe('success');
    const receipt = await publicClientOf(chainB).getTransactionReceipt({ hash: status.txHashes[0] as Hex });
    const transfers = parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receipt.logs })
      .filter((log) => lower(log.address) === lower(usdcB))
      .map((log) => ({ from: lower(log.args.from), to: lower(log.args.to), value: log.args.value }));
    expect(transfers).toEqual([
      { from: lower(gateway.devnet.descriptor.solver.address), to: claims(q).recipient, value: claims(q).amountOut },
      { from: multicaller, to: lower(merchant), value: amount },
    ]);
    expect(await balanceOf(chainB, usdcB, merchant)).toBe(amount);
    expect(await balanceOf(chainB, usdcB, chainB.contracts.multicaller)).toBe(0n);
  });

  it('a plain bridge still names its recipient in details, order and attestation', async () => {
    const recipient = fresh(0x3e7c4a04);
    const q = await requestQuote(gateway, alice, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: parseEther('0.01').toString(),
      recipient,
    });
    expect(claims(q)).toMatchObject({ recipient: lower(recipient), paymentRecipient: lower(recipient) });
    const requestId = q.steps.at(-1)!.requestId;
    const { body } = await call(gateway.url, 'getRequestSignature', { path: `/requests/${requestId}/signature` });
    expect(body.requestData.destinationUser).toBe(lower(recipient));
    const listed = await call(gateway.url, 'getRequestsV2', { query: { id: requestId } });
    expect(lower(listed.body.requests[0].data.metadata.recipient)).toBe(lower(recipient));
  });
});

describe('the attestation of a call request', () => {
  it('signs the multicaller the fill pays as destinationUser, and the AttestationVerifier accepts it on chain', async () => {
    const recipient = fresh(0x3e7c4a05);
    const value = parseEther('0.005');
    const q = await requestQuote(gateway, alice, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: value.toString(),
      tradeType: 'EXACT_OUTPUT',
      recipient,
      txs: [{ to: fresh(0x3e7c4a06), value: value.toString(), data: '0x' }],
    });
    const requestId = q.steps.at(-1)!.requestId;
    const { status, body } = await call(gateway.url, 'getRequestSignature', {
      path: `/requests/${requestId}/signature`,
    });
    expect(status, JSON.stringify(body)).toBe(200);
    const multicaller = lower(chainB.contracts.multicaller);
    expect(body.requestData.destinationUser).toBe(multicaller);
    expect(body.requestData.destinationUser).toBe(claims(q).paymentRecipient);

    const d = body.requestData;
    const args = (destinationUser: Address) =>
      [
        requestId,
        BigInt(d.originChainId),
        pad(d.originUser as Hex),
        pad(d.originCurrency as Hex),
        BigInt(d.originAmount),
        BigInt(d.destinationChainId),
        pad(destinationUser),
        body.signature as Hex,
      ] as const;
    const verify = (destinationUser: Address) =>
      publicClientOf(chainB).readContract({
        address: chainB.contracts.attestationVerifier,
        abi: attestationVerifierAbi,
        functionName: 'verify',
        args: args(destinationUser),
      });
    expect(await verify(chainB.contracts.multicaller)).toBe(true);
    // The quote's `recipient` (which only gets leftover native) is not what was attested.
    expect(await verify(recipient)).toBe(false);

    const v2 = await call(gateway.url, 'getRequestSignatureV2', { path: `/requests/${requestId}/signature/v2` });
    expect(v2.status, JSON.stringify(v2.body)).toBe(200);
    expect(v2.body.requestData).toMatchObject({ destinationUser: multicaller, destinationCurrency: zeroAddress });
  });
});

describe('a call that reverts only at fill time', () => {
  it("is refunded (EXECUTION_REVERTED) with details naming the call's target and its decoded revert", async () => {
    // The call pulls tokens an account approved to the multicaller; that account revokes the approval between
    // the quote (whose simulation passes) and the deposit, so the solver's simulation before the fill reverts.
    const owner = gateway.devnet.descriptor.accounts[3]!;
    const usdcB = tokenOf(chainB, 'USDC');
    const { txs, revoke } = await revocablePull(chainB, owner, fresh(0x3e7c4a07));
    const q = await requestQuote(gateway, bob, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: parseEther('0.01').toString(),
      txs,
    });
    await revoke();
    await executeSteps(gateway, q.steps, bob);
    const record = await waitForStatus(gateway, q.steps.at(-1)!.requestId, ['refund', 'failure', 'success']);
    expect(record).toMatchObject({ status: 'refund', failReason: 'EXECUTION_REVERTED' });
    // The status carries the details as JSON text: the message and the call's decoded revert.
    const details = JSON.parse(record.details as string) as { message: string; revert: string };
    expect(details.message.toLowerCase()).toContain(`the call to ${lower(usdcB)} would revert on`);
    expect(details.message).toContain(details.revert);
    expect(details.revert).toMatch(/^InsufficientAllowance\(/);
    expect(details.message.toLowerCase()).not.toContain(lower(chainB.contracts.onlyOwnerMulticaller));
  });
});

describe("a deposit nested in the solver's own transaction is nobody's", () => {
  it("a call quote whose txs forward 1 wei under a waiting victim's id: the victim's request is untouched and fills when the victim pays", async () => {
    const db = gateway.server.database.db;
    // The victim's order: native A -> B, waiting for their deposit (its id is public through /requests/v3).
    const victimRecipient = fresh(0x3e7c4c01);
    const victim = await requestQuote(gateway, alice, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: parseEther('0.01').toString(),
      recipient: victimRecipient,
    });
    const victimId = victim.steps.at(-1)!.requestId;

    // The attacker's call quote B -> A, whose calls the solver's fill runs on A: 1 wei to the receiver under the
    // victim's id, and the rest to the attacker's own address.
    const merchant = fresh(0x3e7c4c02);
    const value = parseEther('0.005');
    const attack = await requestQuote(gateway, bob, {
      originChainId: chainB.chainId,
      destinationChainId: chainA.chainId,
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: (value + 1n).toString(),
      tradeType: 'EXACT_OUTPUT',
      recipient: bob.address,
      txs: [
        { to: merchant, value: value.toString(), data: '0x' },
        {
          to: chainA.contracts.receiver,
          value: '1',
          data: encodeFunctionData({ abi: receiverAbi, functionName: 'forward', args: [victimId] }),
        },
      ],
    });
    await executeSteps(gateway, attack.steps, bob);
    const attackStatus = await waitForStatus(gateway, attack.steps.at(-1)!.requestId, ['success', 'refund', 'failure']);
    expect(attackStatus.status).toBe('success');
    expect(await balanceOf(chainA, zeroAddress, merchant)).toBe(value);

    // The nested 1 wei is recorded as a deposit under the victim's id, carried by the solver's fill, and consumed on
    // its own (too small to refund): the victim's request still waits.
    const nested = await waitForRow(async () => {
      const rows = await db
        .selectFrom('deposits')
        .selectAll()
        .where('request_id', '=', victimId.toLowerCase())
        .where('status', '=', 'consumed')
        .execute();
      return rows[0];
    });
    expect(nested.amount.toString()).toBe('1');
    expect(lower(nested.sender!)).toBe(lower(gateway.devnet.descriptor.solver.address));
    expect(nested.carrier).toMatch(/^call:0x[0-9a-f]{40}$/);
    expect((await getRequest(db, victimId))?.status).toBe('waiting');

    // The victim pays: filled with exactly the quoted output, nothing refunded.
    const before = await balanceOf(chainB, zeroAddress, victimRecipient);
    await executeSteps(gateway, victim.steps, alice);
    const status = await waitForStatus(gateway, victimId, ['success', 'refund', 'failure']);
    expect(status.status).toBe('success');
    expect((await balanceOf(chainB, zeroAddress, victimRecipient)) - before).toBe(
      BigInt(victim.details.currencyOut.amount),
    );
    const request = await getRequest(db, victimId);
    expect(request?.failReason ?? null).toBeNull();
  });
});

describe("a deposit the multicaller forwards inside the solver's fill", () => {
  it('is refunded to the requester of the fill that carried it (its refundTo), never to the multicaller', async () => {
    const victim = await requestQuote(gateway, alice, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: parseEther('0.01').toString(),
      recipient: fresh(0x3e7c4c11),
    });
    const victimId = victim.steps.at(-1)!.requestId;
    // The requester's calls, run by the multicaller on A, forward 0.002 ETH under the waiting victim's id: the
    // receiver records the multicaller as its depositor.
    const refundTo = fresh(0x3e7c4c12);
    const forwarded = parseEther('0.002');
    const multicallerBefore = await balanceOf(chainA, zeroAddress, chainA.contracts.multicaller);
    const carrying = await requestQuote(gateway, bob, {
      originChainId: chainB.chainId,
      destinationChainId: chainA.chainId,
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: forwarded.toString(),
      tradeType: 'EXACT_OUTPUT',
      recipient: bob.address,
      refundTo,
      txs: [
        {
          to: chainA.contracts.receiver,
          value: forwarded.toString(),
          data: encodeFunctionData({ abi: receiverAbi, functionName: 'forward', args: [victimId] }),
        },
      ],
    });
    await executeSteps(gateway, carrying.steps, bob);
    const status = await waitForStatus(gateway, carrying.steps.at(-1)!.requestId, ['success', 'refund', 'failure']);
    expect(status.status).toBe('success');

    const deadline = Date.now() + 30_000;
    while ((await balanceOf(chainA, zeroAddress, refundTo)) === 0n) {
      if (Date.now() > deadline) throw new Error('the forwarded deposit was never refunded to the requester');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // Less only the refund's gas; the multicaller got nothing back; the victim still waits.
    expect(await balanceOf(chainA, zeroAddress, refundTo)).toBeLessThanOrEqual(forwarded);
    expect(await balanceOf(chainA, zeroAddress, chainA.contracts.multicaller)).toBe(multicallerBefore);
    expect((await getRequest(gateway.server.database.db, victimId))?.status).toBe('waiting');
  });
});

async function waitForRow<T>(read: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting for the nested deposit');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
describe('calls that behave differently once mined than in their simulation', () => {
  // Runtime bytecode, written by hand and installed with anvil_setCode. It succeeds when tx.gasprice is 0 (what a
  // simulation without fee fields runs at) and otherwise burns the gas it is given and reverts:
  //   00 3a        GASPRICE
  //   01 15        ISZERO
  //   02 6012      PUSH1 0x12     (ok)
  //   04 57        JUMPI          gas price 0: jump to ok
  //   05 5b        JUMPDEST       loop:
  //   06 612710    PUSH2 10000
  //   09 5a        GAS
  //   0a 11        GT             gas left > 10000 ?
  //   0b 6005      PUSH1 0x05
  //   0d 57        JUMPI          then loop again
  //   0e 6000      PUSH1 0
  //   10 80        DUP1
  //   11 fd        REVERT(0, 0)
  //   12 5b        JUMPDEST       ok:
  //   13 00        STOP
  const GAS_PRICE_TRAP: Hex = '0x3a156012575b6127105a11600557600080fd5b00';
  // Runtime bytecode of a switch: a call with calldata arms it (slot 0 = 1); a call without calldata succeeds
  // while it is unarmed and reverts once armed. Arming it in the block of a fill, ahead of it, makes the fill
  // revert after every simulation passed.
  //   00 36        CALLDATASIZE
  //   01 600b      PUSH1 0x0b     (arm)
  //   03 57        JUMPI          calldata: jump to arm
  //   04 6000      PUSH1 0
  //   06 54        SLOAD          slot 0
  //   07 6012      PUSH1 0x12     (fail)
  //   09 57        JUMPI          armed: jump to fail
  //   0a 00        STOP
  //   0b 5b        JUMPDEST       arm:
  //   0c 6001      PUSH1 1
  //   0e 6000      PUSH1 0
  //   10 55        SSTORE         slot 0 = 1
  //   11 00        STOP
  //   12 5b        JUMPDEST       fail:
  //   13 6000      PUSH1 0
  //   15 80        DUP1
  //   16 fd        REVERT(0, 0)
  const ARMABLE_SWITCH: Hex = '0x36600b57600054601257005b6001600055005b600080fd';

  const testClientOf = (chain: DevnetChain) =>
    createTestClient({ mode: 'anvil', chain: devnetViemChain(chain), transport: http(chain.rpcUrl) });

  it('a call that reverts only at a real gas price is refused at quote time: the simulation carries the fee caps', async () => {
    const trap = fresh(0x3e7c4b01);
    await testClientOf(chainB).setCode({ address: trap, bytecode: GAS_PRICE_TRAP });
    const attacker = gateway.devnet.descriptor.accounts[2]!;
    const { status, body } = await call(gateway.url, 'getQuote', {
      body: {
        user: attacker.address,
        originChainId: chainA.chainId,
        destinationChainId: chainB.chainId,
        originCurrency: zeroAddress,
        destinationCurrency: zeroAddress,
        amount: parseEther('0.01').toString(),
        tradeType: 'EXACT_INPUT',
        txs: [{ to: trap, value: '0', data: '0x' }],
      },
    });
    expect(status, JSON.stringify(body)).toBe(400);
    expect(body.errorCode).toBe('DESTINATION_TX_FAILED');
    expect(String(body.message).toLowerCase()).toContain(`the call to ${lower(trap)} would revert`);
  });

  it('a fill whose calls revert once mined is paid from the deposit, and the requester is then refused call quotes', async () => {
    const attacker = gateway.devnet.descriptor.accounts[2]!;
    const armer = gateway.devnet.descriptor.accounts[3]!;
    const target = fresh(0x3e7c4b02);
    const testB = testClientOf(chainB);
    await testB.setCode({ address: target, bytecode: ARMABLE_SWITCH });
    const deposit = parseEther('0.01');
    const q = await requestQuote(gateway, attacker, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: deposit.toString(),
      txs: [{ to: target, value: '0', data: '0x' }],
    });
    const requestId = q.steps.at(-1)!.requestId;
    const depositoryA = chainA.contracts.depository;
    const unallocated = () =>
      publicClientOf(chainA).readContract({
        address: depositoryA,
        abi: depositoryAbi,
        functionName: 'unallocated',
        args: [zeroAddress],
      });
    const unallocatedBefore = await unallocated();
    const solverB = gateway.devnet.descriptor.solver.address;
    const solverBBefore = await publicClientOf(chainB).getBalance({ address: solverB });

    // Chain B mines on demand from here: the fill passes its simulation and waits in the pool; the switch is armed
    // with a higher tip, so it is mined first, in the same block.
    await testB.setAutomine(false);
    let fillHash: Hex;
    try {
      await executeSteps(gateway, q.steps, attacker);
      for (;;) {
        const row = await gateway.server.core.db
          .selectFrom('outgoing_txs')
          .select('hashes')
          .where('request_id', '=', requestId.toLowerCase())
          .where('kind', '=', 'fill')
          .executeTakeFirst();
        if (row !== undefined && row.hashes.length > 0) {
          fillHash = row.hashes.at(-1) as Hex;
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const arm = await createWalletClient({
        account: privateKeyToAccount(armer.privateKey),
        chain: devnetViemChain(chainB),
        transport: http(chainB.rpcUrl),
      }).sendTransaction({
        to: target,
        data: '0x01',
        gas: 60_000n,
        maxFeePerGas: 200_000_000_000n,
        maxPriorityFeePerGas: 100_000_000_000n,
      });
      await testB.mine({ blocks: 1 });
      const [armReceipt, fillReceipt] = await Promise.all([
        publicClientOf(chainB).getTransactionReceipt({ hash: arm }),
        publicClientOf(chainB).getTransactionReceipt({ hash: fillHash }),
      ]);
      expect(armReceipt.status).toBe('success');
      expect(fillReceipt.blockNumber).toBe(armReceipt.blockNumber);
      expect(fillReceipt.status).toBe('reverted');
    } finally {
      await testB.setAutomine(true);
    }

    // `failure` (the fill reverted) comes first, then `refund`.
    const record = await waitForStatus(gateway, requestId, ['refund', 'success']);
    expect(record).toMatchObject({ status: 'refund', failReason: 'TRANSACTION_REVERTED' });
    const fillReceipt = await publicClientOf(chainB).getTransactionReceipt({ hash: fillHash! });
    const fillCost = fillReceipt.gasUsed * fillReceipt.effectiveGasPrice;
    // The solver lost exactly the fill's gas on chain B (the reverted fill moved no value).
    expect(solverBBefore - (await publicClientOf(chainB).getBalance({ address: solverB }))).toBe(fillCost);

    // The refund released less than the deposit: what stays in the depository for the solver covers the reverted
    // fill's gas (chain B) and the refund's own gas (chain A); both natives are priced alike on the devnet.
    const refundHash = (record.txHashes as string[]).find((hash) => hash !== fillHash!.toLowerCase()) as Hex;
    const refundReceipt = await publicClientOf(chainA).getTransactionReceipt({ hash: refundHash });
    const released = parseEventLogs({ abi: depositoryAbi, eventName: 'Released', logs: refundReceipt.logs });
    expect(released).toHaveLength(1);
    const refunded = released[0]!.args.amount;
    const kept = (await unallocated()) - unallocatedBefore;
    expect(refunded + kept).toBe(deposit);
    expect(kept).toBeGreaterThanOrEqual(fillCost + refundReceipt.gasUsed * refundReceipt.effectiveGasPrice);

    // The requester is refused call quotes for a while (429, the reference's error shape); a plain bridge is not.
    const again = await call(gateway.url, 'getQuote', {
      body: {
        user: attacker.address,
        originChainId: chainA.chainId,
        destinationChainId: chainB.chainId,
        originCurrency: zeroAddress,
        destinationCurrency: zeroAddress,
        amount: deposit.toString(),
        tradeType: 'EXACT_INPUT',
        txs: [{ to: target, value: '0', data: '0x' }],
      },
    });
    expect(again.status, JSON.stringify(again.body)).toBe(429);
    expect(again.body.errorCode).toBe('RATE_LIMITED');
    expect(again.body.errorData).toMatch(/^retryAfterSeconds=\d+$/);
    await requestQuote(gateway, attacker, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: deposit.toString(),
    });
  });
});
