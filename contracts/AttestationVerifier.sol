// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Ownable} from "./lib/Ownable.sol";
import {Signatures} from "./lib/Signatures.sol";

/// @title AttestationVerifier
/// @notice Checks the solver's attestation of a request (`GET /requests/{id}/signature`) on chain, so
///         a contract can act on a proven cross-chain payment.
/// @dev The signed message is the personal-message (EIP-191) form of
///      `keccak256(abi.encode(requestId, originChainId, originUser, originCurrency, originAmount,
///      destinationChainId, destinationUser))` with types (bytes32, uint256, bytes32, bytes32, uint256,
///      uint256, bytes32); addresses are left-padded to bytes32.
contract AttestationVerifier is Ownable {
    /// @notice The solver key whose attestations are accepted.
    address public signer;

    event SignerChanged(address indexed previousSigner, address indexed newSigner);

    constructor(address owner_, address signer_) Ownable(owner_) {
        if (signer_ == address(0)) revert ZeroAddress();
        signer = signer_;
        emit SignerChanged(address(0), signer_);
    }

    /// @notice Rotates the accepted signer.
    function setSigner(address newSigner) external onlyOwner {
        if (newSigner == address(0)) revert ZeroAddress();
        emit SignerChanged(signer, newSigner);
        signer = newSigner;
    }

    /// @notice True when `signature` (65 bytes, r ‖ s ‖ v) is the signer's attestation of these fields.
    function verify(
        bytes32 requestId,
        uint256 originChainId,
        bytes32 originUser,
        bytes32 originCurrency,
        uint256 originAmount,
        uint256 destinationChainId,
        bytes32 destinationUser,
        bytes calldata signature
    ) external view returns (bool) {
        bytes32 hash = attestationHash(
            requestId, originChainId, originUser, originCurrency, originAmount, destinationChainId, destinationUser
        );
        bytes32 digest = keccak256(abi.encodePacked("\x19Ethereum Signed Message:\n32", hash));
        address recovered = Signatures.recover(digest, signature);
        return recovered != address(0) && recovered == signer;
    }

    /// @notice The hash the solver signs (before the personal-message prefix).
    function attestationHash(
        bytes32 requestId,
        uint256 originChainId,
        bytes32 originUser,
        bytes32 originCurrency,
        uint256 originAmount,
        uint256 destinationChainId,
        bytes32 destinationUser
    ) public pure returns (bytes32) {
        return keccak256(
            abi.encode(
                requestId, originChainId, originUser, originCurrency, originAmount, destinationChainId, destinationUser
            )
        );
    }
}
