import { contractsOfWave, type GatewayContractName } from './gatewayContracts.js';
import {
  createPublicClient,
  createTestClient,
  encodeDeployData,
  encodeFunctionData,
  getContractAddress,
  http,
  maxUint256,
  parseGwei,
  parseUnits,
  toHex,
  type Abi,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import {
  devnetGasPriceOracleBytecode,
  minorTokenAbi,
  minorTokenBytecode,
  permitTokenAbi,
  permitTokenBytecode,
  priceFeedAbi,
  priceFeedBytecode,
  stableTokenAbi,
  stableTokenBytecode,
  wrappedNativeAbi,
  wrappedNativeBytecode,
} from '../../generated/contracts/index.js';
import type { AnvilInstance } from './anvil.js';
import { deployDex, devnetDexWethNeeded, type DexTokens } from './devnetDex.js';
import type { DevnetAccount, DevnetChain, DevnetLongTailToken, DevnetToken } from './devnetDescriptor.js';

/**
 * The devnet's contract deployment: the gateway's contracts, test tokens and price feeds on one started anvil
 * node, sent as nonce-ordered batches (`TransactionBatch`). Node control (starting and stopping the nodes, the
 * accounts, the descriptor) is in `devnet.ts`.
 */

/**
 * Where the reference SDK's `executeGaslessBatch` delegates EOAs by default (Uniswap's Calibur address, the same
 * on every chain); the devnet installs `contracts/BatchExecutor.sol` there.
 */
export const SDK_BATCH_EXECUTOR: Address = '0x000000009B1D0aF20D8C6d0A44e162d11F9b8f00';

/**
 * The devnet chain that charges an L1 data fee like an OP-stack chain (Base, Optimism): the third default chain,
 * so devnets of one or two chains (most tests) charge gas alone. Its GasPriceOracle predeploy is
 * `contracts/DevnetGasPriceOracle.sol` with `l1BaseFee` = `DEVNET_L1_BASE_FEE`.
 */
export const OP_STACK_DEVNET_CHAIN_ID = 31339;
/** The OP-stack GasPriceOracle predeploy address. */
export const GAS_PRICE_ORACLE: Address = '0x420000000000000000000000000000000000000F';
/** The devnet oracle's L1 base fee: 1 gwei, about USD 0.01 of L1 data fee per fill with ETH at 3000. */
export const DEVNET_L1_BASE_FEE = parseGwei('1');

const PRICE_FEED_DECIMALS = 8;
const NATIVE_USD = '3000';
// Anvil starts at a 1 gwei base fee; a generous cap keeps a batch valid even if the base fee climbs.
const MAX_FEE_PER_GAS = parseGwei('100');
const MAX_PRIORITY_FEE_PER_GAS = parseGwei('1');
/** Block gas limit while the setup's transactions are mined: all of one batch fit in one block. */
const SETUP_BLOCK_GAS_LIMIT = 300_000_000n;
/** Enough for any mint, approve, transfer or deposit on the devnet tokens. */
const CALL_GAS = 200_000n;

interface TokenSpec {
  id: string;
  symbol: string;
  name: string;
  /** `stable`: EIP-2612 and EIP-3009; `permit`: EIP-2612 only; `wrapped` and `minor`: neither. */
  kind: 'stable' | 'permit' | 'wrapped' | 'minor';
  /** USD price of its feed; the wrapped token has none, it uses the native feed. */
  usd?: string;
  /** Whole tokens minted to the solver (its inventory). */
  solver: string;
  /** Whole tokens minted to each test account. */
  account: string;
}

const TOKEN_SPECS: readonly TokenSpec[] = [
  { id: 'usdc', symbol: 'USDC', name: 'USD Coin', kind: 'stable', usd: '1', solver: '10000000', account: '100000' },
  { id: 'usdt', symbol: 'USDT', name: 'Tether USD', kind: 'stable', usd: '1', solver: '10000000', account: '100000' },
  { id: 'weth', symbol: 'WETH', name: 'Wrapped Ether', kind: 'wrapped', solver: '10000', account: '100' },
  { id: 'mnr', symbol: 'MNR', name: 'Minor Token', kind: 'minor', usd: '0.5', solver: '10000000', account: '1000000' },
  // Last, so the tokens above keep their addresses.
  { id: 'pusd', symbol: 'PUSD', name: 'Permit USD', kind: 'permit', usd: '1', solver: '10000000', account: '100000' },
];

/**
 * The long-tail token: no price feed, no solver inventory, only DEX pools (`devnetDex.ts`). Deployed after the
 * tokens and feeds above, so their addresses stay the same.
 */
const LONG_SPEC = { id: 'long', symbol: 'LONG', name: 'Long Tail Token', decimals: 18, account: '10000' } as const;

interface Participants {
  deployer: DevnetAccount;
  solver: DevnetAccount;
  accounts: DevnetAccount[];
}

export async function deployChain(
  instance: AnvilInstance,
  index: number,
  blockTime: number | null,
  { deployer, solver, accounts }: Participants,
): Promise<DevnetChain> {
  const client = createPublicClient({ transport: http(instance.rpcUrl, { batch: true }), pollingInterval: 100 });
  const fromDeployer = await TransactionBatch.create(client, deployer, instance.chainId);
  // With interval mining the setup's transactions wait in the pool for the next block, and anvil drops from its pool
  // the ones that do not fit in that block (about 80M gas of them with the DEX seeding): the block gas limit is
  // raised while they are sent, so each batch lands in one block, and restored after.
  const anvil = createTestClient({ mode: 'anvil', transport: http(instance.rpcUrl) });
  const blockGasLimit = blockTime === null ? null : (await client.getBlock({ blockTag: 'latest' })).gasLimit;
  if (blockGasLimit !== null) await anvil.setBlockGasLimit({ gasLimit: SETUP_BLOCK_GAS_LIMIT });

  // Deployments first: their addresses follow from the deployer's nonces, so later calls can use them
  // before anything is mined.
  const deploy = (abi: Abi, bytecode: Hex, args: readonly unknown[] = []): Promise<Address> =>
    fromDeployer.deploy(encodeDeployData({ abi, bytecode, args }));
  // The gateway's contracts (`gatewayContracts.ts`), wave by wave: each wave's constructors name earlier ones only.
  const gateway: Partial<Record<GatewayContractName, Address>> = {};
  const deployWave = async (wave: 'first' | 'second' | 'late') => {
    const contracts = contractsOfWave(wave);
    const addresses = await Promise.all(
      contracts.map((contract) => deploy(contract.abi, contract.bytecode, contract.args(solver.address, gateway))),
    );
    contracts.forEach((contract, i) => (gateway[contract.name] = addresses[i]!));
  };
  await deployWave('first');
  await deployWave('second');
  const { onlyOwnerMulticaller } = gateway as Required<typeof gateway>;
  const nativePriceFeed = await deploy(priceFeedAbi, priceFeedBytecode, [
    PRICE_FEED_DECIMALS,
    'ETH / USD',
    parseUnits(NATIVE_USD, PRICE_FEED_DECIMALS),
    deployer.address,
  ]);

  const tokens: DevnetToken[] = [];
  for (const spec of TOKEN_SPECS) {
    const address = await deploy(...tokenDeployment(spec, deployer.address));
    const priceFeed =
      spec.usd === undefined
        ? nativePriceFeed
        : await deploy(priceFeedAbi, priceFeedBytecode, [
            PRICE_FEED_DECIMALS,
            `${spec.symbol} / USD`,
            parseUnits(spec.usd, PRICE_FEED_DECIMALS),
            deployer.address,
          ]);
    tokens.push({
      id: spec.id,
      symbol: spec.symbol,
      name: spec.name,
      address,
      decimals: spec.kind === 'stable' || spec.kind === 'permit' ? 6 : 18,
      priceFeed,
      supportsPermit: spec.kind === 'stable' || spec.kind === 'permit',
    });
  }

  const long: DevnetLongTailToken = {
    id: LONG_SPEC.id,
    symbol: LONG_SPEC.symbol,
    name: LONG_SPEC.name,
    decimals: LONG_SPEC.decimals,
    address: await deploy(minorTokenAbi, minorTokenBytecode, [LONG_SPEC.name, LONG_SPEC.symbol, deployer.address]),
  };
  const byId = (id: string): DevnetToken => tokens.find((token) => token.id === id)!;
  const dexTokens: DexTokens = { weth: byId('weth'), usdc: byId('usdc'), usdt: byId('usdt'), mnr: byId('mnr'), long };
  const usdOf = (id: string): bigint =>
    parseUnits(TOKEN_SPECS.find((spec) => spec.id === id)!.usd!, PRICE_FEED_DECIMALS);
  const usd = {
    weth: parseUnits(NATIVE_USD, PRICE_FEED_DECIMALS),
    usdc: usdOf('usdc'),
    usdt: usdOf('usdt'),
    mnr: usdOf('mnr'),
  };
  const dexWeth = devnetDexWethNeeded(dexTokens, usd);

  // Fund the solver's inventory and the test accounts. Wrapped native must be backed by real native, so
  // the deployer is given the ETH to wrap and hands the tokens out; everyone else keeps anvil's 10,000 ETH.
  const grants = tokens.flatMap((token, i) => {
    const spec = TOKEN_SPECS[i]!;
    return [solver, ...accounts].map((account) => ({
      token: token.address,
      wrapped: spec.kind === 'wrapped',
      to: account.address,
      amount: parseUnits(account === solver ? spec.solver : spec.account, token.decimals),
    }));
  });
  // Test accounts hold LONG to pay with; the solver holds none.
  for (const account of accounts) {
    grants.push({
      token: long.address,
      wrapped: false,
      to: account.address,
      amount: parseUnits(LONG_SPEC.account, long.decimals),
    });
  }
  const toWrap = grants.reduce((sum, grant) => (grant.wrapped ? sum + grant.amount : sum), dexWeth);
  if (toWrap > 0n) {
    const balance = await client.getBalance({ address: deployer.address });
    await anvil.setBalance({ address: deployer.address, value: balance + toWrap });
  }
  const wrap = encodeFunctionData({ abi: wrappedNativeAbi, functionName: 'deposit' });
  const transfer = (to: Address, amount: bigint): Hex =>
    encodeFunctionData({ abi: wrappedNativeAbi, functionName: 'transfer', args: [to, amount] });
  const mint = (to: Address, amount: bigint): Hex =>
    encodeFunctionData({ abi: stableTokenAbi, functionName: 'mint', args: [to, amount] });
  await Promise.all(
    grants.flatMap(({ token, wrapped, to, amount }) =>
      wrapped
        ? [fromDeployer.call(token, wrap, amount), fromDeployer.call(token, transfer(to, amount))]
        : [fromDeployer.call(token, mint(to, amount))],
    ),
  );
  // The deployer keeps the WETH the pools are seeded with.
  await fromDeployer.call(dexTokens.weth.address, wrap, dexWeth);
  const dex = await deployDex({ sender: fromDeployer, owner: deployer.address, tokens: dexTokens, usd });
  // After everything else, so the addresses above stay what they were before it existed.
  await deployWave('late');
  // Everything is sent: with interval mining, mine it now rather than wait for the next tick (the block phases are
  // set after the setup anyway).
  if (blockGasLimit !== null) await anvil.mine({ blocks: 1 });
  await fromDeployer.confirm();

  // The solver's ERC-20 fills are `transferFrom(solver, recipient, amount)` run by the fill contract.
  const fromSolver = await TransactionBatch.create(client, solver, instance.chainId);
  const approve = encodeFunctionData({
    abi: stableTokenAbi,
    functionName: 'approve',
    args: [onlyOwnerMulticaller, maxUint256],
  });
  // LONG too, though the solver holds none: a token it receives from a swap is then fillable like the others.
  await Promise.all([...tokens, long].map((token) => fromSolver.call(token.address, approve)));
  if (blockGasLimit !== null) await anvil.mine({ blocks: 1 });
  await fromSolver.confirm();
  if (blockGasLimit !== null) await anvil.setBlockGasLimit({ gasLimit: blockGasLimit });

  // The batch executor goes where the reference SDK's `executeGaslessBatch` expects it (Calibur's address on
  // every chain): its runtime code is copied there from the deployment above (the code reads its own address
  // from the EOA's delegation designator, so it needs no constructor state).
  const executorCode = await client.getCode({ address: gateway.batchExecutor! });
  if (executorCode === undefined || executorCode === '0x') throw new Error('the batch executor was not deployed');
  await anvil.setCode({
    address: SDK_BATCH_EXECUTOR,
    bytecode: executorCode,
  });

  const feeModel = instance.chainId === OP_STACK_DEVNET_CHAIN_ID ? 'op-stack' : 'ethereum';
  if (feeModel === 'op-stack') await installGasPriceOracle(client, instance.rpcUrl);

  return {
    chainId: instance.chainId,
    name: `devnet-${String.fromCharCode(97 + index)}`,
    feeModel,
    rpcUrl: instance.rpcUrl,
    wsUrl: instance.wsUrl,
    blockTime,
    // The batch executor is used at the address the SDK expects, where its code was copied.
    contracts: { ...(gateway as Required<typeof gateway>), batchExecutor: SDK_BATCH_EXECUTOR },
    tokens,
    longTailTokens: [long],
    nativePriceFeed,
    dex,
  };
}

/**
 * Installs the devnet GasPriceOracle at the OP-stack predeploy address: its runtime code is what running its
 * creation code returns (an `eth_call` without `to`; it has no constructor), set with `anvil_setCode`, and its
 * `l1BaseFee` (slot 0) with `anvil_setStorageAt`. No transaction: the deployer's nonces, and so every other
 * devnet address, stay the same on every chain.
 */
async function installGasPriceOracle(client: PublicClient, rpcUrl: string): Promise<void> {
  const { data: runtime } = await client.call({ data: devnetGasPriceOracleBytecode });
  if (runtime === undefined || runtime === '0x') throw new Error('the GasPriceOracle code did not build');
  const anvil = createTestClient({ mode: 'anvil', transport: http(rpcUrl) });
  await anvil.setCode({ address: GAS_PRICE_ORACLE, bytecode: runtime });
  await anvil.setStorageAt({ address: GAS_PRICE_ORACLE, index: 0, value: toHex(DEVNET_L1_BASE_FEE, { size: 32 }) });
}

function tokenDeployment(spec: TokenSpec, owner: Address): [Abi, Hex, readonly unknown[]] {
  switch (spec.kind) {
    case 'stable':
      return [stableTokenAbi, stableTokenBytecode, [spec.name, spec.symbol, owner]];
    case 'permit':
      return [permitTokenAbi, permitTokenBytecode, [spec.name, spec.symbol, owner]];
    case 'wrapped':
      return [wrappedNativeAbi, wrappedNativeBytecode, [spec.name, spec.symbol]];
    case 'minor':
      return [minorTokenAbi, minorTokenBytecode, [spec.name, spec.symbol, owner]];
  }
}

/** A nonce of a `TransactionBatch` and its place in the sending order. */
interface Turn {
  nonce: number;
  /** Settles once the previous nonce's transaction has been sent. */
  previous: Promise<void>;
  /** Marks this nonce's transaction sent (or failed), letting the next one go. */
  done: () => void;
}

/**
 * Signs and sends one account's transactions with consecutive nonces, in nonce order, without waiting for
 * each to be mined; `confirm()` then waits for the last one and checks every receipt. Nonces are taken
 * synchronously, so calls may be started concurrently and still land in call order.
 */
class TransactionBatch {
  private readonly sent: Array<{ hash: Hex; label: string }> = [];
  private nextNonce: number;
  /** Settles once the transaction of the last nonce handed out has been sent (or failed to be). */
  private lastTurn: Promise<void> = Promise.resolve();

  private constructor(
    private readonly client: PublicClient,
    private readonly account: PrivateKeyAccount,
    private readonly chainId: number,
    private readonly firstNonce: number,
  ) {
    this.nextNonce = firstNonce;
  }

  static async create(client: PublicClient, from: DevnetAccount, chainId: number): Promise<TransactionBatch> {
    const nonce = await client.getTransactionCount({ address: from.address, blockTag: 'pending' });
    return new TransactionBatch(client, privateKeyToAccount(from.privateKey), chainId, nonce);
  }

  /** Sends a contract creation and returns the address it will have. */
  async deploy(data: Hex): Promise<Address> {
    const turn = this.take();
    const address = getContractAddress({ from: this.account.address, nonce: BigInt(turn.nonce) });
    try {
      // Constructors here touch no other contract, so estimating against the latest block is exact.
      const estimate = await this.client.estimateGas({ account: this.account.address, data });
      await this.send(turn, { data, gas: (estimate * 5n) / 4n }, `deploy (nonce ${turn.nonce})`);
    } finally {
      turn.done();
    }
    return address;
  }

  /** Sends a call with a fixed gas limit (its target may not be mined yet, so it cannot be estimated). */
  async call(to: Address, data: Hex, value = 0n, gas = CALL_GAS): Promise<void> {
    const turn = this.take();
    try {
      await this.send(turn, { to, data, value, gas }, `call to ${to} (nonce ${turn.nonce})`);
    } finally {
      turn.done();
    }
  }

  /**
   * The next nonce, and its turn to be sent: after the previous nonce's transaction reached the node. Sent out
   * of order (the estimates of concurrent deployments finish in any order), a transaction would wait in the
   * node's pool behind a nonce gap, and anvil's automine does not always mine it once the gap is filled: a
   * setup would then wait for a receipt that never comes.
   */
  private take(): Turn {
    const nonce = this.nextNonce++;
    const previous = this.lastTurn;
    let done!: () => void;
    this.lastTurn = new Promise<void>((resolve) => (done = resolve));
    return { nonce, previous, done };
  }

  /** Waits until every sent transaction is mined and throws if any reverted. */
  async confirm(): Promise<void> {
    const last = this.sent.at(-1);
    if (!last) return;
    // One sender's transactions are mined in nonce order: once the last is in, all are.
    await this.client.waitForTransactionReceipt({ hash: last.hash, pollingInterval: 100, timeout: 60_000 });
    const receipts = await Promise.all(this.sent.map(({ hash }) => this.client.getTransactionReceipt({ hash })));
    const failed = receipts.flatMap((receipt, i) => (receipt.status === 'success' ? [] : [this.sent[i]!.label]));
    if (failed.length > 0) {
      throw new Error(`devnet setup on chain ${this.chainId}: transaction(s) reverted: ${failed.join(', ')}`);
    }
  }

  private async send(
    { nonce, previous }: Turn,
    tx: { to?: Address; data: Hex; value?: bigint; gas: bigint },
    label: string,
  ): Promise<void> {
    const serializedTransaction = await this.account.signTransaction({
      type: 'eip1559',
      chainId: this.chainId,
      nonce,
      maxFeePerGas: MAX_FEE_PER_GAS,
      maxPriorityFeePerGas: MAX_PRIORITY_FEE_PER_GAS,
      ...tx,
    });
    await previous;
    const hash = await this.client.sendRawTransaction({ serializedTransaction });
    this.sent[nonce - this.firstNonce] = { hash, label };
  }
}
