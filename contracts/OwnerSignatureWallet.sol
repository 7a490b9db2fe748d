// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title OwnerSignatureWallet
/// @notice A minimal contract wallet for tests of EIP-1271: it accepts a signature of a hash when its owner's key made
///         it (ECDSA over the hash itself, as an EIP-712 digest is signed). It holds nothing and sends nothing.
contract OwnerSignatureWallet {
    bytes4 internal constant MAGIC_VALUE = 0x1626ba7e;
    bytes4 internal constant INVALID = 0xffffffff;

    address public immutable owner;

    constructor(address owner_) {
        owner = owner_;
    }

    /// @notice EIP-1271: `MAGIC_VALUE` when `signature` is the owner's ECDSA signature of `hash`.
    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        if (signature.length != 65) return INVALID;
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        if (v < 27) v += 27;
        address signer = ecrecover(hash, v, r, s);
        return signer != address(0) && signer == owner ? MAGIC_VALUE : INVALID;
    }
}
