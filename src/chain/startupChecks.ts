import {
  createWalletClient,
  custom,
  defineChain,
  erc20Abi,
  formatUnits,
  type Address,
  type Hex,
  type LocalAccount,
  type PublicClient,
} from 'viem';
import { depositoryAbi, onlyOwnerMulticallerAbi, priceFeedAbi } from '../../generated/contracts/index.js';
import type { ChainConfig, ChainContracts, CurrencyConfig } from '../core/chains/types.js';

/**
 * What the solver needs of a chain before it serves it, read from the chain. Three kinds of finding:
 *
 * - `chain`: the RPC answers for another chain, a configured contract has no code, or the depository or the fill
 *   contract is not owned by the solver's key. The solver cannot serve the chain at all (every fill or release
 *   would revert, or land on another network): its watchers do not run and quotes to and from it are refused.
 * - `approval`: the solver has not approved the fill contract (`onlyOwnerMulticaller`) for an ERC-20 the chain
 *   delivers; every fill of that token would revert. Quotes delivering it on that chain are refused.
 * - `price`: a price feed's answer is older than its `maxAgeSeconds`; quotes priced by it already fail
 *   (`PRICE_FETCH_FAILED`), the finding says which feed to look at.
 */
export type ChainFinding =
  | { kind: 'chain'; chainId: number; message: string }
  | { kind: 'approval'; chainId: number; token: Address; symbol: string; message: string }
  | { kind: 'price'; chainId: number; feed: Address; symbol: string; message: string };

/** The allowance `npm run approve` sets (the largest uint256) and the least it counts as "approved for good". */
export const FULL_APPROVAL = 2n ** 256n - 1n;
export const LASTING_APPROVAL = 2n ** 255n;

const CONTRACT_NAMES: ReadonlyArray<keyof ChainContracts> = [
  'depository',
  'receiver',
  'multicaller',
  'onlyOwnerMulticaller',
  'approvalProxy',
  'erc20Router',
  'multicall3',
  'attestationVerifier',
  'depositAddressFactory',
  'batchExecutor',
  'swapDepositRouter',
];

const firstLine = (error: unknown): string =>
  (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? 'RPC error';

/**
 * The chain-level findings: the RPC's chain id, each configured contract's code, the owner of the depository and
 * of the fill contract. An RPC that does not answer yields no finding (readiness reports it as unreachable) and
 * `reachable: false`: the caller decides whether an unchecked chain may run.
 */
export async function checkChain(
  chain: ChainConfig,
  client: PublicClient,
  solver: Address,
): Promise<{ reachable: boolean; findings: ChainFinding[] }> {
  const finding = (message: string): ChainFinding => ({ kind: 'chain', chainId: chain.id, message });
  let reported: number;
  try {
    reported = await client.getChainId();
  } catch {
    return { reachable: false, findings: [] };
  }
  if (reported !== chain.id) {
    return {
      reachable: true,
      findings: [
        finding(
          `the RPC reports chain id ${reported}, expected ${chain.id}: httpRpcUrl of chain ${chain.id} points at another network`,
        ),
      ],
    };
  }
  const findings: ChainFinding[] = [];
  try {
    const named = CONTRACT_NAMES.flatMap((name) => {
      const address = chain.contracts[name];
      return address === undefined ? [] : [{ name, address }];
    });
    const codes = await Promise.all(named.map(({ address }) => client.getCode({ address })));
    named.forEach(({ name, address }, index) => {
      const code = codes[index];
      if (code === undefined || code === '0x')
        findings.push(finding(`contracts.${name} ${address} has no code on chain ${chain.id}`));
    });
    const owned = [
      { name: 'depository', address: chain.contracts.depository, abi: depositoryAbi },
      { name: 'onlyOwnerMulticaller', address: chain.contracts.onlyOwnerMulticaller, abi: onlyOwnerMulticallerAbi },
    ] as const;
    for (const contract of owned) {
      if (findings.some((f) => f.message.startsWith(`contracts.${contract.name} `))) continue;
      const owner = await client
        .readContract({ address: contract.address, abi: contract.abi, functionName: 'owner' })
        .catch((error: unknown) => new Error(firstLine(error)));
      if (owner instanceof Error) {
        findings.push(
          finding(`contracts.${contract.name} ${contract.address} does not answer owner(): ${owner.message}`),
        );
      } else if (owner.toLowerCase() !== solver.toLowerCase()) {
        findings.push(
          finding(
            `contracts.${contract.name} ${contract.address} is owned by ${owner}, not by the solver ${solver}: ` +
              `GATEWAY_SOLVER_PRIVATE_KEY is not the key the contracts were deployed for`,
          ),
        );
      }
    }
  } catch {
    // The chain stopped answering half way: nothing is known about it yet.
    return { reachable: false, findings: [] };
  }
  return { reachable: true, findings };
}

/**
 * The solver's approvals of the fill contract for each ERC-20 of the chain: missing when the allowance is zero
 * or below the solver's balance of the token (a fill of that much would revert). An unreadable token yields no
 * finding.
 */
export async function checkApprovals(
  chain: ChainConfig,
  client: PublicClient,
  solver: Address,
): Promise<ChainFinding[]> {
  const spender = chain.contracts.onlyOwnerMulticaller;
  const results = await Promise.all(
    chain.currencies.map(async (currency): Promise<ChainFinding | null> => {
      try {
        const [allowance, balance] = await Promise.all([
          client.readContract({
            address: currency.address,
            abi: erc20Abi,
            functionName: 'allowance',
            args: [solver, spender],
          }),
          client.readContract({ address: currency.address, abi: erc20Abi, functionName: 'balanceOf', args: [solver] }),
        ]);
        if (allowance > 0n && allowance >= balance) return null;
        return {
          kind: 'approval',
          chainId: chain.id,
          token: currency.address,
          symbol: currency.symbol,
          message:
            `the solver's approval of ${currency.symbol} (${currency.address}) for the fill contract ${spender} is ` +
            `${formatUnits(allowance, currency.decimals)}, below its balance ${formatUnits(balance, currency.decimals)}: ` +
            `fills of ${currency.symbol} on chain ${chain.id} would revert (run npm run approve)`,
        };
      } catch {
        return null;
      }
    }),
  );
  return results.filter((finding): finding is ChainFinding => finding !== null);
}

/** The feed a currency's price is read or checked from, with its age limit; none without `maxAgeSeconds`. */
function agedFeed(currency: CurrencyConfig): { feed: Address; maxAgeSeconds: number } | null {
  const price = currency.price;
  if (price === undefined || price.feed === undefined || price.maxAgeSeconds === undefined) return null;
  return { feed: price.feed, maxAgeSeconds: price.maxAgeSeconds };
}

/** Each price feed whose latest answer is older than its `maxAgeSeconds` by the chain's clock. */
export async function checkPriceFeeds(chain: ChainConfig, client: PublicClient): Promise<ChainFinding[]> {
  const fed = [chain.nativeCurrency, ...chain.currencies].flatMap((currency) => {
    const aged = agedFeed(currency);
    return aged === null ? [] : [{ currency, ...aged }];
  });
  if (fed.length === 0) return [];
  let now: number;
  try {
    now = Number((await client.getBlock({ blockTag: 'latest' })).timestamp);
  } catch {
    return [];
  }
  const results = await Promise.all(
    fed.map(async ({ currency, feed, maxAgeSeconds }): Promise<ChainFinding | null> => {
      const round = await client
        .readContract({ address: feed, abi: priceFeedAbi, functionName: 'latestRoundData' })
        .catch((error: unknown) => new Error(firstLine(error)));
      const reason =
        round instanceof Error
          ? `does not answer latestRoundData: ${round.message}`
          : now - Number(round[3]) > maxAgeSeconds
            ? `is stale: its answer is ${now - Number(round[3])} s old, more than maxAgeSeconds ${maxAgeSeconds}`
            : null;
      return reason === null
        ? null
        : {
            kind: 'price',
            chainId: chain.id,
            feed,
            symbol: currency.symbol,
            message: `price feed ${feed} of ${currency.symbol} on chain ${chain.id} ${reason}; quotes priced by it are refused until it is updated`,
          };
    }),
  );
  return results.filter((finding): finding is ChainFinding => finding !== null);
}

/** What `npm run approve` did for one token of one chain. */
export interface ApprovalOutcome {
  chainId: number;
  symbol: string;
  token: Address;
  /** `approved`: a transaction set the full allowance; `kept`: it was already set; `failed`: see `message`. */
  action: 'approved' | 'kept' | 'failed';
  transactionHash?: Hex;
  message?: string;
}

/**
 * Sets what the fill path needs: the solver's full approval (`FULL_APPROVAL`) of the fill contract
 * (`onlyOwnerMulticaller`) for every ERC-20 of the chain. Idempotent: a token whose allowance is already at least
 * `LASTING_APPROVAL` (full approvals are not spent down by `transferFrom`) is left alone. A chain whose RPC
 * answers for another network is refused, so a key never approves on the wrong chain.
 */
export async function approveFillTokens(
  chain: ChainConfig,
  client: PublicClient,
  account: LocalAccount,
): Promise<ApprovalOutcome[]> {
  const reported = await client.getChainId();
  if (reported !== chain.id)
    throw new Error(`chain ${chain.id}: the RPC reports chain id ${reported}; nothing was approved on it`);
  const spender = chain.contracts.onlyOwnerMulticaller;
  const wallet = createWalletClient({
    account,
    chain: defineChain({
      id: chain.id,
      name: chain.displayName,
      nativeCurrency: {
        name: chain.nativeCurrency.name,
        symbol: chain.nativeCurrency.symbol,
        decimals: chain.nativeCurrency.decimals,
      },
      rpcUrls: { default: { http: [chain.httpRpcUrl] } },
    }),
    transport: custom(client),
  });
  const outcomes: ApprovalOutcome[] = [];
  // One after the other: each approval takes the account's next nonce.
  for (const currency of chain.currencies) {
    const base = { chainId: chain.id, symbol: currency.symbol, token: currency.address };
    try {
      const allowance = await client.readContract({
        address: currency.address,
        abi: erc20Abi,
        functionName: 'allowance',
        args: [account.address, spender],
      });
      if (allowance >= LASTING_APPROVAL) {
        outcomes.push({ ...base, action: 'kept' });
        continue;
      }
      const hash = await wallet.writeContract({
        address: currency.address,
        abi: erc20Abi,
        functionName: 'approve',
        args: [spender, FULL_APPROVAL],
      });
      const receipt = await client.waitForTransactionReceipt({ hash });
      outcomes.push(
        receipt.status === 'success'
          ? { ...base, action: 'approved', transactionHash: hash }
          : { ...base, action: 'failed', transactionHash: hash, message: 'the approval transaction reverted' },
      );
    } catch (error) {
      outcomes.push({ ...base, action: 'failed', message: firstLine(error) });
    }
  }
  return outcomes;
}
