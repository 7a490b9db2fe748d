// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @notice ECDSA recovery that rejects malleable (high-s) signatures and bad `v` values.
library Signatures {
    /// @dev secp256k1n / 2: signatures with a larger `s` are the malleable twin of a valid one.
    uint256 internal constant HALF_ORDER = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0;

    /// @return signer The recovered address, or the zero address when the signature is invalid.
    function recover(bytes32 digest, uint8 v, bytes32 r, bytes32 s) internal pure returns (address signer) {
        if (v < 27) v += 27;
        if (uint256(s) > HALF_ORDER || (v != 27 && v != 28)) return address(0);
        return ecrecover(digest, v, r, s);
    }

    /// @notice Recovers from a 65-byte `r ‖ s ‖ v` signature; any other length gives the zero address.
    function recover(bytes32 digest, bytes memory signature) internal pure returns (address) {
        if (signature.length != 65) return address(0);
        bytes32 r;
        bytes32 s;
        uint8 v;
        assembly ("memory-safe") {
            r := mload(add(signature, 0x20))
            s := mload(add(signature, 0x40))
            v := byte(0, mload(add(signature, 0x60)))
        }
        return recover(digest, v, r, s);
    }
}
