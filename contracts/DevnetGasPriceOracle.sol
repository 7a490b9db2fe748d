// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title DevnetGasPriceOracle
/// @notice The devnet's stand-in for the OP-stack GasPriceOracle predeploy
///         (0x420000000000000000000000000000000000000F), so one devnet chain charges an L1 data fee the way
///         Base and Optimism do and the gateway's quotes can be checked against it. Not deployed by a transaction:
///         the devnet installs its runtime code at the predeploy address (`anvil_setCode`) and sets `l1BaseFee`
///         (storage slot 0) with `anvil_setStorageAt`.
/// @dev The real oracle compresses the transaction (FastLZ since Fjord) and scales by blob and base fee scalars;
///      this one keeps the pre-Ecotone shape with every byte counted as non-zero calldata, a deterministic
///      formula a test can recompute: `getL1Fee(data) = (data.length + 68) * 16 * l1BaseFee`, where `data` is
///      the unsigned RLP-encoded transaction and the 68 bytes stand for its signature, as on the real oracle.
contract DevnetGasPriceOracle {
    /// @notice The L1 base fee in wei (slot 0).
    uint256 public l1BaseFee;

    /// @notice Gas of one non-zero calldata byte on L1.
    uint256 public constant BYTE_GAS = 16;
    /// @notice Bytes a signature adds to the unsigned transaction `getL1Fee` is given.
    uint256 public constant SIGNATURE_BYTES = 68;

    /// @notice The L1 data fee (wei) a transaction whose unsigned RLP encoding is `data` pays.
    function getL1Fee(bytes calldata data) external view returns (uint256) {
        return (data.length + SIGNATURE_BYTES) * BYTE_GAS * l1BaseFee;
    }
}
