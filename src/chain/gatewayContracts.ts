/**
 * The gateway's contracts and what each is constructed with: one graph that `npm run deploy`
 * (`deployContracts.ts`) and the devnet (`devnetContracts.ts`) both deploy, so a new contract or a changed
 * constructor is written once. Listed in deployment order: a contract's arguments name only the solver and
 * contracts listed before it. `wave` groups the ones the devnet sends together (one batch each, in this order;
 * `late` goes after the devnet's tokens and pools, so the addresses before it keep their nonces).
 */
import type { Abi, Address, Hex } from 'viem';
import {
  approvalProxyAbi,
  approvalProxyBytecode,
  attestationVerifierAbi,
  attestationVerifierBytecode,
  batchExecutorAbi,
  batchExecutorBytecode,
  depositAddressFactoryAbi,
  depositAddressFactoryBytecode,
  depositoryAbi,
  depositoryBytecode,
  erc20RouterAbi,
  erc20RouterBytecode,
  multicall3Abi,
  multicall3Bytecode,
  multicallerAbi,
  multicallerBytecode,
  onlyOwnerMulticallerAbi,
  onlyOwnerMulticallerBytecode,
  receiverAbi,
  receiverBytecode,
  swapDepositRouterAbi,
  swapDepositRouterBytecode,
} from '../../generated/contracts/index.js';
import type { ChainContracts } from '../core/chains/types.js';

export type GatewayContractName = keyof Required<ChainContracts>;

export interface GatewayContract {
  name: GatewayContractName;
  abi: Abi;
  bytecode: Hex;
  /** The constructor's arguments, from the solver and the contracts deployed before it. */
  args: (solver: Address, deployed: Readonly<Partial<Record<GatewayContractName, Address>>>) => readonly unknown[];
  wave: 'first' | 'second' | 'late';
}

const none = () => [] as const;
/** The address of an earlier contract of the graph (the list's order guarantees it is there). */
const earlier = (deployed: Readonly<Partial<Record<GatewayContractName, Address>>>, name: GatewayContractName) => {
  const address = deployed[name];
  if (address === undefined) throw new Error(`the contract graph names ${name} before it is deployed`);
  return address;
};

export const GATEWAY_CONTRACTS: readonly GatewayContract[] = [
  { name: 'depository', abi: depositoryAbi, bytecode: depositoryBytecode, args: (s) => [s], wave: 'first' },
  { name: 'receiver', abi: receiverAbi, bytecode: receiverBytecode, args: (s) => [s, s], wave: 'first' },
  { name: 'multicaller', abi: multicallerAbi, bytecode: multicallerBytecode, args: none, wave: 'first' },
  {
    name: 'onlyOwnerMulticaller',
    abi: onlyOwnerMulticallerAbi,
    bytecode: onlyOwnerMulticallerBytecode,
    args: (s) => [s],
    wave: 'first',
  },
  { name: 'multicall3', abi: multicall3Abi, bytecode: multicall3Bytecode, args: none, wave: 'first' },
  {
    name: 'attestationVerifier',
    abi: attestationVerifierAbi,
    bytecode: attestationVerifierBytecode,
    args: (s) => [s, s],
    wave: 'first',
  },
  { name: 'batchExecutor', abi: batchExecutorAbi, bytecode: batchExecutorBytecode, args: none, wave: 'first' },
  {
    name: 'approvalProxy',
    abi: approvalProxyAbi,
    bytecode: approvalProxyBytecode,
    args: (s, d) => [earlier(d, 'multicaller'), earlier(d, 'depository'), s],
    wave: 'second',
  },
  {
    name: 'erc20Router',
    abi: erc20RouterAbi,
    bytecode: erc20RouterBytecode,
    args: (_s, d) => [earlier(d, 'multicaller')],
    wave: 'second',
  },
  {
    name: 'depositAddressFactory',
    abi: depositAddressFactoryAbi,
    bytecode: depositAddressFactoryBytecode,
    args: (s, d) => [s, earlier(d, 'depository')],
    wave: 'second',
  },
  {
    name: 'swapDepositRouter',
    abi: swapDepositRouterAbi,
    bytecode: swapDepositRouterBytecode,
    args: (_s, d) => [earlier(d, 'depository')],
    wave: 'late',
  },
];

/** The contracts of one devnet wave, in the graph's order. */
export const contractsOfWave = (wave: GatewayContract['wave']): readonly GatewayContract[] =>
  GATEWAY_CONTRACTS.filter((contract) => contract.wave === wave);
