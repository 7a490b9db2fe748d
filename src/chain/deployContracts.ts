import {
  createPublicClient,
  createWalletClient,
  encodeDeployData,
  getAddress,
  http,
  type Abi,
  type Address,
  type Hex,
  type LocalAccount,
} from 'viem';
import { GATEWAY_CONTRACTS, type GatewayContractName } from './gatewayContracts.js';
import type { ChainContracts } from '../core/chains/types.js';

/** Multicall3's address on nearly every public chain (deployed there with a keyless transaction). */
const CANONICAL_MULTICALL3: Address = '0xcA11bde05977b3631167028862bE2a173976CA11';

export interface DeployContractsParameters {
  /** The chain's HTTP RPC URL. */
  rpcUrl: string;
  /** Pays for the deployments; holds no role in the contracts. */
  deployer: LocalAccount;
  /** The solver's address: owner of the depository and the fill contract, receiver of native deposits. */
  solver: Address;
  /** Called with a line of progress per contract. */
  onProgress?: (message: string) => void;
}

/**
 * Deploys the gateway's contracts to one chain (`npm run deploy`): depository, receiver, multicaller, the
 * solver-owned multicaller that runs fills, approval proxy, ERC-20 router, attestation verifier, deposit-address
 * factory and the EIP-7702 batch executor of gasless batches (`contracts/BatchExecutor.sol`: no owner, no
 * constructor state; its EIP-712 domain salt is its own address, so SDK clients point `executeGaslessBatch` at
 * it, see docs/real-networks.md), and the swap-and-deposit router of inputs the solver does not hold (no owner); Multicall3 only when the chain has none at its canonical address. Each deployment waits for its receipt and checks the
 * code is there. Returns the addresses in the shape of a config file's `contracts`.
 */
export async function deployContracts({
  rpcUrl,
  deployer,
  solver,
  onProgress,
}: DeployContractsParameters): Promise<ChainContracts> {
  const publicClient = createPublicClient({ transport: http(rpcUrl) });
  const chainId = await publicClient.getChainId();
  const wallet = createWalletClient({ account: deployer, transport: http(rpcUrl) });
  const say = onProgress ?? (() => undefined);

  async function deploy(name: string, abi: Abi, bytecode: Hex, args: readonly unknown[] = []): Promise<Address> {
    const hash = await wallet.sendTransaction({ chain: null, data: encodeDeployData({ abi, bytecode, args }) });
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    if (receipt.status !== 'success' || receipt.contractAddress == null)
      throw new Error(`deploying ${name} on chain ${chainId} failed (transaction ${hash})`);
    const address = getAddress(receipt.contractAddress);
    say(`${name}: ${address} (transaction ${hash})`);
    return address;
  }

  const deployed: Partial<Record<GatewayContractName, Address>> = {};
  for (const contract of GATEWAY_CONTRACTS) {
    if (contract.name === 'multicall3') {
      // The canonical Multicall3 is on nearly every public chain already.
      const existing = await publicClient.getCode({ address: CANONICAL_MULTICALL3 });
      if (existing !== undefined && existing !== '0x') {
        say(`multicall3: ${CANONICAL_MULTICALL3} (already on the chain)`);
        deployed.multicall3 = CANONICAL_MULTICALL3;
        continue;
      }
    }
    deployed[contract.name] = await deploy(
      contract.name,
      contract.abi,
      contract.bytecode,
      contract.args(solver, deployed),
    );
  }
  return deployed as Required<ChainContracts>;
}
