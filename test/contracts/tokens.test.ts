import { describe, expect, it } from 'vitest';
import {
  domainSeparator,
  encodeAbiParameters,
  getContract,
  keccak256,
  pad,
  parseAbiParameters,
  parseEther,
  parseSignature,
  parseUnits,
  toHex,
  zeroAddress,
  type Abi,
  type Address,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import {
  attestationVerifierAbi,
  minorTokenAbi,
  permitTokenAbi,
  priceFeedAbi,
  stableTokenAbi,
  wrappedNativeAbi,
} from '../../generated/contracts/index.js';
import type { DevnetAccount } from '../../src/chain/devnet.js';
import { expectRevert, useDevnet } from '../helpers/anvil.js';

const devnet = useDevnet();

const tokenInfo = (id: string) => devnet.chain.tokens.find((t) => t.id === id)!;
const user = (i: number) => devnet.descriptor.accounts[i]!;
const latestTimestamp = async () => (await devnet.publicClient.getBlock()).timestamp;
/** A typed contract that reads through the devnet and writes as `account` (user 0 by default). */
const contract = <const A extends Abi>(address: Address, abi: A, account: DevnetAccount = user(0)) =>
  getContract({ address, abi, client: { public: devnet.publicClient, wallet: devnet.wallet(account) } });
const domainOf = (id: 'usdc' | 'usdt') => ({
  name: tokenInfo(id).name,
  version: '1',
  chainId: devnet.chain.chainId,
  verifyingContract: tokenInfo(id).address,
});

describe('StableToken', () => {
  const usdc = (account?: DevnetAccount) => contract(tokenInfo('usdc').address, stableTokenAbi, account);

  it('has 6 decimals and an EIP-712 domain that includes the chain id', async () => {
    expect(await usdc().read.decimals()).toBe(6);
    expect(await usdc().read.name()).toBe('USD Coin');
    expect(await usdc().read.symbol()).toBe('USDC');
    expect(await usdc().read.DOMAIN_SEPARATOR()).toBe(domainSeparator({ domain: domainOf('usdc') }));
    const { domain } = await devnet.publicClient.getEip712Domain({ address: tokenInfo('usdc').address });
    expect(domain).toMatchObject(domainOf('usdc'));
  });

  it('accepts an EIP-2612 permit signed with viem, once', async () => {
    const [owner, spender] = [user(0), user(2)];
    const value = parseUnits('77', 6);
    const nonce = await usdc().read.nonces([owner.address]);
    const deadline = (await latestTimestamp()) + 3_600n;
    const signature = await privateKeyToAccount(owner.privateKey).signTypedData({
      domain: domainOf('usdc'),
      types: {
        Permit: [
          { name: 'owner', type: 'address' },
          { name: 'spender', type: 'address' },
          { name: 'value', type: 'uint256' },
          { name: 'nonce', type: 'uint256' },
          { name: 'deadline', type: 'uint256' },
        ],
      },
      primaryType: 'Permit',
      message: { owner: owner.address, spender: spender.address, value, nonce, deadline },
    });
    const { v, r, s } = parseSignature(signature);
    const permit = (permitDeadline = deadline) =>
      usdc(spender).write.permit([owner.address, spender.address, value, permitDeadline, Number(v), r, s]);

    await devnet.mined(permit());
    expect(await usdc().read.allowance([owner.address, spender.address])).toBe(value);
    expect(await usdc().read.nonces([owner.address])).toBe(nonce + 1n);
    await expectRevert(permit(), 'InvalidSignature'); // replay: the nonce has moved on
    await expectRevert(permit(1n), 'PermitExpired');
  });

  describe('EIP-3009', () => {
    const usdt = (account?: DevnetAccount) => contract(tokenInfo('usdt').address, stableTokenAbi, account);
    const authorizationFields = [
      { name: 'from', type: 'address' },
      { name: 'to', type: 'address' },
      { name: 'value', type: 'uint256' },
      { name: 'validAfter', type: 'uint256' },
      { name: 'validBefore', type: 'uint256' },
      { name: 'nonce', type: 'bytes32' },
    ] as const;

    /** User 1 signs an authorization to pay `value` USDT to `to`. */
    async function authorize(
      primaryType: 'TransferWithAuthorization' | 'ReceiveWithAuthorization',
      to: Address,
      value: bigint,
      overrides: { validBefore?: bigint } = {},
    ) {
      const from = user(1);
      const message = {
        from: from.address,
        to,
        value,
        validAfter: 0n,
        validBefore: overrides.validBefore ?? (await latestTimestamp()) + 3_600n,
        nonce: keccak256(toHex(`${primaryType}-${to}-${value}-${Math.random()}`)),
      };
      const signature = await privateKeyToAccount(from.privateKey).signTypedData({
        domain: domainOf('usdt'),
        types: { [primaryType]: authorizationFields },
        primaryType,
        message,
      });
      const { v, r, s } = parseSignature(signature);
      /** Contract arguments for the signed message, or for a tampered copy of it. */
      const argsFor = (m: typeof message) =>
        [m.from, m.to, m.value, m.validAfter, m.validBefore, m.nonce, Number(v), r, s] as const;
      return { message, args: argsFor(message), argsFor };
    }

    it('transferWithAuthorization moves tokens for any submitter and cannot be replayed', async () => {
      const to = user(3).address;
      const { message, args } = await authorize('TransferWithAuthorization', to, parseUnits('15', 6));
      const submitter = usdt(devnet.descriptor.solver);
      const before = await devnet.balanceOf(tokenInfo('usdt').address, to);

      await devnet.mined(submitter.write.transferWithAuthorization(args));
      expect(await devnet.balanceOf(tokenInfo('usdt').address, to)).toBe(before + parseUnits('15', 6));
      expect(await usdt().read.authorizationState([message.from, message.nonce])).toBe(true);
      await expectRevert(submitter.write.transferWithAuthorization(args), 'AuthorizationAlreadyUsed');
    });

    it('rejects expired and tampered authorizations', async () => {
      const to = user(3).address;
      const submitter = usdt(devnet.descriptor.solver);
      const expired = await authorize('TransferWithAuthorization', to, 1n, { validBefore: 1n });
      await expectRevert(submitter.write.transferWithAuthorization(expired.args), 'AuthorizationExpired');
      const valid = await authorize('TransferWithAuthorization', to, 1n);
      const tampered = valid.argsFor({ ...valid.message, value: 2n });
      await expectRevert(submitter.write.transferWithAuthorization(tampered), 'InvalidSignature');
    });

    it('receiveWithAuthorization only accepts the payee as submitter', async () => {
      const payee = user(3);
      const { args } = await authorize('ReceiveWithAuthorization', payee.address, parseUnits('2', 6));
      await expectRevert(usdt(devnet.descriptor.solver).write.receiveWithAuthorization(args), 'CallerMustBePayee');
      const before = await devnet.balanceOf(tokenInfo('usdt').address, payee.address);
      await devnet.mined(usdt(payee).write.receiveWithAuthorization(args));
      expect(await devnet.balanceOf(tokenInfo('usdt').address, payee.address)).toBe(before + parseUnits('2', 6));
    });
  });

  it('lets only the owner mint', async () => {
    await expectRevert(usdc(user(0)).write.mint([user(0).address, 1n]), 'Unauthorized');
    const before = await devnet.balanceOf(tokenInfo('usdc').address, user(0).address);
    await devnet.mined(usdc(devnet.descriptor.deployer).write.mint([user(0).address, 5n]));
    expect(await devnet.balanceOf(tokenInfo('usdc').address, user(0).address)).toBe(before + 5n);
  });
});

describe('PermitToken (EIP-2612 without EIP-3009)', () => {
  const pusd = (account?: DevnetAccount) => contract(tokenInfo('pusd').address, permitTokenAbi, account);
  const domain = () => ({
    name: 'Permit USD',
    version: '2',
    chainId: devnet.chain.chainId,
    verifyingContract: tokenInfo('pusd').address,
  });

  it('has 6 decimals, a version-2 domain read from name() and version(), and no 3009 or 5267 functions', async () => {
    expect(await pusd().read.decimals()).toBe(6);
    expect(await pusd().read.symbol()).toBe('PUSD');
    expect(await pusd().read.version()).toBe('2');
    expect(await pusd().read.DOMAIN_SEPARATOR()).toBe(domainSeparator({ domain: domain() }));
    const address = tokenInfo('pusd').address;
    const authorizationState = devnet.publicClient.readContract({
      address,
      abi: stableTokenAbi,
      functionName: 'authorizationState',
      args: [user(0).address, pad('0x00')],
    });
    await expect(authorizationState).rejects.toThrow();
    await expect(devnet.publicClient.getEip712Domain({ address })).rejects.toThrow();
  });

  it('accepts an EIP-2612 permit once, refuses an expired or tampered one, lets only the owner mint', async () => {
    const [owner, spender] = [user(0), user(2)];
    const value = parseUnits('12', 6);
    const nonce = await pusd().read.nonces([owner.address]);
    const deadline = (await latestTimestamp()) + 3_600n;
    const signature = await privateKeyToAccount(owner.privateKey).signTypedData({
      domain: domain(),
      types: {
        Permit: [
          { name: 'owner', type: 'address' },
          { name: 'spender', type: 'address' },
          { name: 'value', type: 'uint256' },
          { name: 'nonce', type: 'uint256' },
          { name: 'deadline', type: 'uint256' },
        ],
      },
      primaryType: 'Permit',
      message: { owner: owner.address, spender: spender.address, value, nonce, deadline },
    });
    const { v, r, s } = parseSignature(signature);
    const permit = (permitValue = value, permitDeadline = deadline) =>
      pusd(spender).write.permit([owner.address, spender.address, permitValue, permitDeadline, Number(v), r, s]);

    await expectRevert(permit(value + 1n), 'InvalidSignature');
    await expectRevert(permit(value, 1n), 'PermitExpired');
    await devnet.mined(permit());
    expect(await pusd().read.allowance([owner.address, spender.address])).toBe(value);
    expect(await pusd().read.nonces([owner.address])).toBe(nonce + 1n);
    await expectRevert(permit(), 'InvalidSignature'); // replay: the nonce has moved on
    await expectRevert(pusd(user(0)).write.mint([user(0).address, 1n]), 'Unauthorized');
  });
});

describe('WrappedNative and MinorToken', () => {
  it('wraps and unwraps native 1:1', async () => {
    const weth = contract(tokenInfo('weth').address, wrappedNativeAbi, user(2));
    const owner = user(2).address;
    const before = await weth.read.balanceOf([owner]);
    await devnet.mined(devnet.wallet(user(2)).sendTransaction({ to: weth.address, value: parseEther('2') }));
    expect(await weth.read.balanceOf([owner])).toBe(before + parseEther('2'));
    await devnet.mined(weth.write.withdraw([parseEther('2')]));
    expect(await weth.read.balanceOf([owner])).toBe(before);
    await expectRevert(weth.write.withdraw([before + 1n]), 'InsufficientBalance');
  });

  it('minor token has 18 decimals, its symbol, and owner-only mint', async () => {
    const mnr = contract(tokenInfo('mnr').address, minorTokenAbi);
    expect(await mnr.read.symbol()).toBe('MNR');
    expect(await mnr.read.decimals()).toBe(18);
    await expectRevert(mnr.write.mint([user(0).address, 1n]), 'Unauthorized');
  });
});

describe('PriceFeed', () => {
  it('serves AggregatorV3 data and bumps the round on setAnswer', async () => {
    const feed = contract(devnet.chain.nativePriceFeed, priceFeedAbi, devnet.descriptor.deployer);
    expect(await feed.read.decimals()).toBe(8);
    expect(await feed.read.description()).toBe('ETH / USD');
    expect(await feed.read.version()).toBe(4n);
    const [roundId, answer, startedAt, updatedAt, answeredInRound] = await feed.read.latestRoundData();
    expect(answer).toBe(3_000n * 10n ** 8n);
    expect(answeredInRound).toBe(roundId);
    expect(updatedAt).toBeGreaterThan(0n);
    expect(startedAt).toBe(updatedAt);

    const answerOf = async (id: string) => {
      const [, tokenAnswer] = await contract(tokenInfo(id).priceFeed, priceFeedAbi).read.latestRoundData();
      return tokenAnswer;
    };
    expect(await answerOf('usdc')).toBe(10n ** 8n);
    expect(await answerOf('usdt')).toBe(10n ** 8n);
    expect(await answerOf('mnr')).toBe(5n * 10n ** 7n);
    expect(tokenInfo('weth').priceFeed).toBe(feed.address);

    await devnet.testClient.increaseTime({ seconds: 60 });
    const receipt = await devnet.mined(feed.write.setAnswer([3_100n * 10n ** 8n]));
    const { timestamp } = await devnet.publicClient.getBlock({ blockNumber: receipt.blockNumber });
    const next = roundId + 1n;
    expect(await feed.read.latestRoundData()).toEqual([next, 3_100n * 10n ** 8n, timestamp, timestamp, next]);
    expect((await feed.read.getRoundData([roundId]))[1]).toBe(answer);
    await expectRevert(feed.read.getRoundData([999n]), 'NoDataPresent');
    await expectRevert(contract(feed.address, priceFeedAbi, user(0)).write.setAnswer([1n]), 'Unauthorized');
  });
});

describe('AttestationVerifier', () => {
  const attestation = () => ({
    requestId: keccak256(toHex('request-1')),
    originChainId: 31337n,
    originUser: pad(user(0).address),
    originCurrency: pad(zeroAddress),
    originAmount: parseEther('1'),
    destinationChainId: 31338n,
    destinationUser: pad(user(1).address),
  });
  type Attestation = ReturnType<typeof attestation>;
  const fieldsOf = (a: Attestation) =>
    [
      a.requestId,
      a.originChainId,
      a.originUser,
      a.originCurrency,
      a.originAmount,
      a.destinationChainId,
      a.destinationUser,
    ] as const;
  const attestationTypes = parseAbiParameters('bytes32, uint256, bytes32, bytes32, uint256, uint256, bytes32');
  /** What the gateway signs: keccak256(abi.encode(...)) of the fields, as a personal message. */
  const hashOf = (a: Attestation) => keccak256(encodeAbiParameters(attestationTypes, fieldsOf(a)));
  const sign = (account: DevnetAccount, a: Attestation) =>
    privateKeyToAccount(account.privateKey).signMessage({ message: { raw: hashOf(a) } });
  const verifier = () => contract(devnet.chain.contracts.attestationVerifier, attestationVerifierAbi);
  const verify = (a: Attestation, signature: Hex) => verifier().read.verify([...fieldsOf(a), signature]);

  it('accepts the solver personal-message signature and rejects tampering or other signers', async () => {
    const a = attestation();
    expect(await verifier().read.signer()).toBe(devnet.descriptor.solver.address);
    expect(await verifier().read.attestationHash(fieldsOf(a))).toBe(hashOf(a));

    const signature = await sign(devnet.descriptor.solver, a);
    expect(await verify(a, signature)).toBe(true);
    expect(await verify({ ...a, originAmount: a.originAmount + 1n }, signature)).toBe(false);
    expect(await verify({ ...a, destinationUser: pad(user(2).address) }, signature)).toBe(false);
    expect(await verify(a, await sign(user(0), a))).toBe(false);
    expect(await verify(a, '0x1234')).toBe(false);
  });
});
