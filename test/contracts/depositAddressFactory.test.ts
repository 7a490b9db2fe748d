import { describe, expect, it } from 'vitest';
import {
  encodeAbiParameters,
  getContractAddress,
  keccak256,
  parseEther,
  parseEventLogs,
  parseUnits,
  toHex,
  zeroAddress,
  type Address,
  type Hex,
} from 'viem';
import { depositAddressFactoryAbi, depositoryAbi } from '../../generated/contracts/index.js';
import { expectRevert, useDevnet } from '../helpers/anvil.js';

const devnet = useDevnet({ chains: [31337] });

let counter = 0;
const newKey = (): Hex => toHex(++counter + 50_000, { size: 32 });
const factory = () => devnet.chain.contracts.depositAddressFactory;
const depository = () => devnet.chain.contracts.depository;
const usdc = (): Address => devnet.chain.tokens.find((t) => t.id === 'usdc')!.address;
const solver = () => devnet.descriptor.solver;
const user = (i: number) => devnet.descriptor.accounts[i]!;

const computeAddress = (key: Hex, recovery: Address) =>
  devnet.publicClient.readContract({
    address: factory(),
    abi: depositAddressFactoryAbi,
    functionName: 'computeAddress',
    args: [key, recovery],
  });

type Leg = { id: Hex; depositor: Address; amount: bigint };
const sweep = (signer: 'solver' | 'user', key: Hex, recovery: Address, sweepId: Hex, token: Address, legs: Leg[]) =>
  devnet.wallet(signer === 'solver' ? solver() : user(3)).writeContract({
    address: factory(),
    abi: depositAddressFactoryAbi,
    functionName: 'sweep',
    args: [key, recovery, sweepId, token, legs],
  });

const sendNative = (to: Address, value: bigint) =>
  devnet.mined(devnet.wallet(user(0)).sendTransaction({ to, value, data: '0x' }));

async function transferUsdc(to: Address, amount: bigint) {
  await devnet.mined(
    devnet.wallet(user(1)).writeContract({
      address: usdc(),
      abi: [
        {
          type: 'function',
          name: 'transfer',
          stateMutability: 'nonpayable',
          inputs: [
            { name: 'to', type: 'address' },
            { name: 'amount', type: 'uint256' },
          ],
          outputs: [{ type: 'bool' }],
        },
      ],
      functionName: 'transfer',
      args: [to, amount],
    }),
  );
}

describe('DepositAddressFactory', () => {
  it('computes the CREATE2 address of an EIP-1167 clone salted by key and recovery address', async () => {
    const key = newKey();
    const implementation = await devnet.publicClient.readContract({
      address: factory(),
      abi: depositAddressFactoryAbi,
      functionName: 'implementation',
    });
    const initCode =
      `0x3d602d80600a3d3981f3363d3d373d3d3d363d73${implementation.slice(2).toLowerCase()}5af43d82803e903d91602b57fd5bf3` as Hex;
    const salt = keccak256(encodeAbiParameters([{ type: 'bytes32' }, { type: 'address' }], [key, zeroAddress]));
    const expected = getContractAddress({ opcode: 'CREATE2', from: factory(), salt, bytecode: initCode });
    expect(await computeAddress(key, zeroAddress)).toBe(expected);
    // Another recovery address or another key is another address.
    expect(await computeAddress(key, user(2).address)).not.toBe(expected);
    expect(await computeAddress(newKey(), zeroAddress)).not.toBe(expected);
  });

  it('sweeps a plain native transfer into the depository under the named request id, deploying the address', async () => {
    const key = newKey();
    const address = await computeAddress(key, zeroAddress);
    await sendNative(address, parseEther('0.4'));
    expect(await devnet.publicClient.getCode({ address })).toBeUndefined();
    const id = toHex(7, { size: 32 });
    const receipt = await devnet.mined(
      sweep('solver', key, zeroAddress, toHex(1, { size: 32 }), zeroAddress, [
        { id, depositor: user(0).address, amount: parseEther('0.4') },
      ]),
    );
    expect(receipt.status).toBe('success');
    expect((await devnet.publicClient.getCode({ address }))?.length).toBeGreaterThan(2);
    expect(await devnet.publicClient.getBalance({ address })).toBe(0n);
    const [deposit] = parseEventLogs({ abi: depositoryAbi, eventName: 'Deposit', logs: receipt.logs });
    expect(deposit!.args).toMatchObject({
      id,
      depositor: user(0).address,
      token: zeroAddress,
      amount: parseEther('0.4'),
    });
    expect(deposit!.address.toLowerCase()).toBe(depository().toLowerCase());
  });

  it('sweeps an ERC-20 in two legs (quoted amount and excess), each a deposit of its own', async () => {
    const key = newKey();
    const address = await computeAddress(key, zeroAddress);
    await transferUsdc(address, parseUnits('15', 6));
    const id = toHex(8, { size: 32 });
    const receipt = await devnet.mined(
      sweep('solver', key, zeroAddress, toHex(2, { size: 32 }), usdc(), [
        { id, depositor: user(1).address, amount: parseUnits('10', 6) },
        { id, depositor: user(1).address, amount: parseUnits('5', 6) },
      ]),
    );
    const deposits = parseEventLogs({ abi: depositoryAbi, eventName: 'Deposit', logs: receipt.logs });
    expect(deposits.map((d) => d.args.amount)).toEqual([parseUnits('10', 6), parseUnits('5', 6)]);
    expect(await devnet.balanceOf(usdc(), address)).toBe(0n);
  });

  it('refuses a sweep by anyone but the owner, a second sweep with the same id, and more than the address holds', async () => {
    const key = newKey();
    const address = await computeAddress(key, zeroAddress);
    await sendNative(address, parseEther('0.2'));
    const legs = [{ id: toHex(9, { size: 32 }), depositor: user(3).address, amount: parseEther('0.1') }];
    await expectRevert(sweep('user', key, zeroAddress, toHex(3, { size: 32 }), zeroAddress, legs), 'Unauthorized');
    await devnet.mined(sweep('solver', key, zeroAddress, toHex(3, { size: 32 }), zeroAddress, legs));
    await expectRevert(sweep('solver', key, zeroAddress, toHex(3, { size: 32 }), zeroAddress, legs), 'AlreadySwept');
    const tooMuch = [{ ...legs[0]!, amount: parseEther('0.5') }];
    await expect(sweep('solver', key, zeroAddress, toHex(4, { size: 32 }), zeroAddress, tooMuch)).rejects.toThrow();
    expect(await devnet.publicClient.getBalance({ address })).toBe(parseEther('0.1'));
  });

  it('lets only the recovery address withdraw what is still at its address', async () => {
    const key = newKey();
    const recovery = user(2);
    const address = await computeAddress(key, recovery.address);
    await sendNative(address, parseEther('0.3'));
    const target = '0x00000000000000000000000000000000000a11ce' as Address;
    // Someone else calling recover derives another address (salted by the caller): nothing there to move.
    await expect(
      devnet.wallet(user(3)).writeContract({
        address: factory(),
        abi: depositAddressFactoryAbi,
        functionName: 'recover',
        args: [key, zeroAddress, parseEther('0.3'), target],
      }),
    ).rejects.toThrow();
    const receipt = await devnet.mined(
      devnet.wallet(recovery).writeContract({
        address: factory(),
        abi: depositAddressFactoryAbi,
        functionName: 'recover',
        args: [key, zeroAddress, parseEther('0.3'), target],
      }),
    );
    expect(receipt.status).toBe('success');
    expect(await devnet.publicClient.getBalance({ address: target })).toBe(parseEther('0.3'));
    expect(await devnet.publicClient.getBalance({ address })).toBe(0n);
  });

  it('keeps accepting plain transfers once deployed (a reused open address)', async () => {
    const key = newKey();
    const address = await computeAddress(key, zeroAddress);
    await sendNative(address, parseEther('0.1'));
    await devnet.mined(
      sweep('solver', key, zeroAddress, toHex(5, { size: 32 }), zeroAddress, [
        { id: toHex(10, { size: 32 }), depositor: user(0).address, amount: parseEther('0.1') },
      ]),
    );
    const second = await sendNative(address, parseEther('0.2'));
    expect(second.status).toBe('success');
    expect(await devnet.publicClient.getBalance({ address })).toBe(parseEther('0.2'));
  });
});
