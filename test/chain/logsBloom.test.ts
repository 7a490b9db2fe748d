/**
 * What a block header proves about its logs (`src/chain/logsBloom.ts`), checked against blocks a real anvil chain
 * mined: the bits computed here must be the node's own, or the deposit watcher would skip a block with a deposit.
 */
import { describe, expect, it } from 'vitest';
import { encodeFunctionData, parseEther, toHex, type Hex } from 'viem';
import { depositoryAbi } from '../../generated/contracts/index.js';
import { bloomBitsOf, EMPTY_TRIE_ROOT, mayHoldLogsOf } from '../../src/chain/logsBloom.js';
import { useDevnet } from '../helpers/anvil.js';

const devnet = useDevnet();
const user = () => devnet.descriptor.accounts[0]!;
const stranger: Hex = '0x00000000000000000000000000000000deadbeef';

/** The logs bloom of these logs, built bit by bit from `bloomBitsOf`. */
function bloomOf(logs: ReadonlyArray<{ address: Hex; topics: readonly Hex[] }>): string {
  const bytes = new Uint8Array(256);
  for (const log of logs)
    for (const value of [log.address, ...log.topics])
      for (const [index, mask] of bloomBitsOf(value)) bytes[index]! |= mask;
  return toHex(bytes);
}

async function depositNative(): Promise<bigint> {
  const receipt = await devnet.mined(
    devnet.wallet(user()).sendTransaction({
      to: devnet.chain.contracts.depository,
      data: encodeFunctionData({
        abi: depositoryAbi,
        functionName: 'depositNative',
        args: [user().address, toHex(0xb100_0000 + Math.floor(Math.random() * 1e6), { size: 32 })],
      }),
      value: parseEther('0.01'),
    }),
  );
  return receipt.blockNumber;
}

describe('a block header as proof of its logs', () => {
  it('computes the bloom bits the node sets: a deposit block holds the depository and not a stranger', async () => {
    const blockNumber = await depositNative();
    const block = await devnet.publicClient.getBlock({ blockNumber });
    const logs = await devnet.publicClient.getLogs({ fromBlock: blockNumber, toBlock: blockNumber });
    expect(logs.length).toBeGreaterThan(0);
    // Every bit of the node's bloom, from this module's bits of each log's address and topics.
    expect(bloomOf(logs)).toBe(block.logsBloom);

    const depository = bloomBitsOf(devnet.chain.contracts.depository);
    expect(mayHoldLogsOf(block, [depository])).toBe(true);
    expect(mayHoldLogsOf(block, [bloomBitsOf(stranger), depository])).toBe(true);
    expect(mayHoldLogsOf(block, [bloomBitsOf(stranger)])).toBe(false);
  });

  it('proves an empty block holds no log of anyone, from its transactions root', async () => {
    await devnet.testClient.mine({ blocks: 1 });
    const block = await devnet.publicClient.getBlock();
    expect(block.transactions).toEqual([]);
    expect(block.transactionsRoot).toBe(EMPTY_TRIE_ROOT);
    expect(mayHoldLogsOf(block, [bloomBitsOf(devnet.chain.contracts.depository)])).toBe(false);
  });

  it('cannot tell from an all-zero bloom in a block with transactions, nor from a header without the fields', async () => {
    // A plain transfer logs nothing, so its block's bloom is all zeros; so would a node's that does not fill it.
    const receipt = await devnet.mined(devnet.wallet(user()).sendTransaction({ to: stranger, value: 1n }));
    const block = await devnet.publicClient.getBlock({ blockNumber: receipt.blockNumber });
    expect(block.logsBloom).toBe(`0x${'0'.repeat(512)}`);
    expect(block.transactionsRoot).not.toBe(EMPTY_TRIE_ROOT);
    const depository = bloomBitsOf(devnet.chain.contracts.depository);
    expect(mayHoldLogsOf(block, [depository])).toBe(true);

    expect(mayHoldLogsOf({}, [depository])).toBe(true);
    expect(mayHoldLogsOf({ logsBloom: '0x1234' }, [depository])).toBe(true);
    expect(mayHoldLogsOf({ logsBloom: `0x${'z'.repeat(512)}` }, [depository])).toBe(true);
    // A bloom with the depository's three bits may hold its logs; with any one of them missing, it cannot.
    const withBits = (bits: typeof depository) => {
      const bytes = new Uint8Array(256);
      for (const [index, mask] of bits) bytes[index]! |= mask;
      return { logsBloom: toHex(bytes) };
    };
    expect(mayHoldLogsOf(withBits(depository), [depository])).toBe(true);
    for (let missing = 0; missing < 3; missing++)
      expect(mayHoldLogsOf(withBits(depository.filter((_, i) => i !== missing)), [depository])).toBe(false);
  });
});
