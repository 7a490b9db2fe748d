import { parseAbi } from 'viem';

/**
 * The functions of the gateway's contracts the core encodes, as human-readable ABI fragments. The core owns
 * them (it never imports `generated/`); `test/core/abi.test.ts` checks each against the compiled ABIs, so a
 * contract change that breaks one fails the build.
 */
export const depositoryAbi = parseAbi([
  'function depositNative(address depositor, bytes32 id) payable returns (uint256)',
  'function depositErc20(address depositor, address token, uint256 amount, bytes32 id) returns (uint256)',
  'function release(uint256 depositIndex, bytes32 id, address depositor, address token, uint256 depositAmount, address to, uint256 amount)',
  'struct Release { uint256 depositIndex; bytes32 id; address depositor; address token; uint256 depositAmount; address to; uint256 amount; }',
  'function releaseBatch(Release[] releases)',
]);

export const receiverAbi = parseAbi(['function forward(bytes32 id) payable']);

export const onlyOwnerMulticallerAbi = parseAbi([
  'struct Call { address to; bytes data; uint256 value; bool allowFailure; }',
  'struct Result { bool success; bytes returnData; }',
  'function fill(bytes32 id, Call[] calls) payable returns (Result[])',
]);

export const multicallerAbi = parseAbi([
  'struct Call { address to; bytes data; uint256 value; bool allowFailure; }',
  'struct Result { bool success; bytes returnData; }',
  'function multicall(Call[] calls, address refundTo) payable returns (Result[])',
  'function cleanupErc20s(address[] tokens, address[] recipients)',
  'function cleanupNative(uint256 amount, address recipient)',
]);

export const erc20Abi = parseAbi([
  'function approve(address spender, uint256 amount) returns (bool)',
  'function transfer(address to, uint256 amount) returns (bool)',
  'function transferFrom(address from, address to, uint256 amount) returns (bool)',
  'function balanceOf(address owner) view returns (uint256)',
  'function allowance(address owner, address spender) view returns (uint256)',
]);

/** The batch executor gasless batches delegate to (`contracts/BatchExecutor.sol`, the SDK's Calibur interface). */
export const batchExecutorAbi = parseAbi([
  'struct Call { address to; uint256 value; bytes data; }',
  'struct BatchedCall { Call[] calls; bool revertOnFailure; }',
  'struct SignedBatchedCall { BatchedCall batchedCall; uint256 nonce; bytes32 keyHash; address executor; uint256 deadline; }',
  'function execute(SignedBatchedCall signedBatchedCall, bytes wrappedSignature) payable',
  'function getSeq(uint256 key) view returns (uint256)',
  'error NotDelegated()',
  'error Unauthorized()',
  'error InvalidSignature()',
  'error InvalidNonce(uint256 expectedSeq, uint256 givenSeq)',
  'error SignatureExpired(uint256 deadline)',
  'error UnsupportedKey(bytes32 keyHash)',
  'error UnsupportedHookData()',
]);

/** Custom errors of the gateway's contracts a simulated user call can revert with, for decoding. */
export const knownErrorsAbi = parseAbi([
  'error InsufficientBalance(address account, uint256 balance, uint256 needed)',
  'error InsufficientAllowance(address spender, uint256 allowance, uint256 needed)',
  'error InvalidReceiver(address receiver)',
  'error ZeroAmount()',
  'error DirectTransferNotAllowed()',
  'error PermitExpired(uint256 deadline)',
]);
