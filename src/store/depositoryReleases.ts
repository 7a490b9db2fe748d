import { parseAbi } from 'viem';

/**
 * The depository's release functions, as the store reads them back from the refunds and settlement batches it
 * recorded (`outgoing_txs.payload`) to write their ledger movements (`ledgerMovements.ts`). Written once, here at
 * the bottom layer: the core's `depositoryAbi` (`src/core/abi.ts`) is built with them, and encodes what is decoded.
 */
export const depositoryReleaseAbi = parseAbi([
  'function release(uint256 depositIndex, bytes32 id, address depositor, address token, uint256 depositAmount, address to, uint256 amount)',
  'struct Release { uint256 depositIndex; bytes32 id; address depositor; address token; uint256 depositAmount; address to; uint256 amount; }',
  'function releaseBatch(Release[] releases)',
]);
