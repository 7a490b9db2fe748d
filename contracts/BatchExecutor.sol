// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title BatchExecutor
/// @notice An EIP-7702 delegation target that runs a batch of calls signed by the delegating EOA itself, so a
///         relayer (the gateway's origin sender) can submit it and pay the gas. It is interface-compatible with
///         the batch executor the reference SDK's `executeGaslessBatch` drives (Uniswap's Calibur): the same
///         `execute(SignedBatchedCall, bytes)` and `getSeq(uint256)`, the same EIP-712 types and the same domain
///         (`name "Calibur"`, `version "1.0.0"`, the chain id, the EOA as `verifyingContract`, and the
///         implementation's address left-padded as `salt`). Only what the SDK uses is implemented: the root key
///         (`keyHash` 0, the EOA's own key), sequential nonces per key, `executor` (0 = anyone) and `deadline`
///         (0 = none). It is written for this project, not a copy of Calibur.
/// @dev Runs as the EOA's code: `address(this)` is the EOA and storage is the EOA's, kept in a namespaced slot
///      (ERC-7201 style) so it cannot collide with another delegate's layout. The implementation's address is
///      read from the EOA's delegation designator (`0xef0100 || implementation`), so the same bytecode works at
///      any address (the devnet installs it at the address the SDK expects). Calls run from the EOA with
///      `msg.sender` = EOA; `tx.origin` is the relayer, so calls that check `tx.origin` do not work through it.
///
///      Signatures:
///      - `execute(((address to, uint256 value, bytes data)[] calls, bool revertOnFailure) batchedCall,
///         uint256 nonce, bytes32 keyHash, address executor, uint256 deadline) signedBatchedCall,
///         bytes wrappedSignature) payable`: `wrappedSignature` is `abi.encode(bytes signature, bytes hookData)`;
///         hook data must be empty. A failing call with `revertOnFailure` reverts the batch with that call's
///         own revert data (so a simulation shows the innermost reason).
///      - `execute(BatchedCall batchedCall) payable`: the EOA calling itself (no signature needed).
///      - `getSeq(uint256 key) view returns (uint256)`: the next sequence number of nonce key `key`.
contract BatchExecutor {
    struct Call {
        address to;
        uint256 value;
        bytes data;
    }

    struct BatchedCall {
        Call[] calls;
        bool revertOnFailure;
    }

    struct SignedBatchedCall {
        BatchedCall batchedCall;
        uint256 nonce;
        bytes32 keyHash;
        address executor;
        uint256 deadline;
    }

    /// @custom:storage-location erc7201:intentgateway.batchexecutor
    struct ExecutorStorage {
        mapping(uint256 => uint256) seqs;
    }

    error NotDelegated();
    error Unauthorized();
    error InvalidSignature();
    error InvalidNonce(uint256 expectedSeq, uint256 givenSeq);
    error SignatureExpired(uint256 deadline);
    error UnsupportedKey(bytes32 keyHash);
    error UnsupportedHookData();

    event BatchExecuted(uint256 nonce, bool[] results);

    // keccak256(abi.encode(uint256(keccak256("intentgateway.batchexecutor")) - 1)) & ~bytes32(uint256(0xff))
    bytes32 private constant STORAGE_SLOT = 0xac0b89d5bfea82ee3353b180f2c7d4e144fa8be54f7e573a216f35b188b34400;

    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract,bytes32 salt)");
    bytes32 private constant NAME_HASH = keccak256("Calibur");
    bytes32 private constant VERSION_HASH = keccak256("1.0.0");
    bytes32 private constant CALL_TYPEHASH = keccak256("Call(address to,uint256 value,bytes data)");
    bytes32 private constant BATCHED_CALL_TYPEHASH =
        keccak256("BatchedCall(Call[] calls,bool revertOnFailure)Call(address to,uint256 value,bytes data)");
    bytes32 private constant SIGNED_BATCHED_CALL_TYPEHASH = keccak256(
        "SignedBatchedCall(BatchedCall batchedCall,uint256 nonce,bytes32 keyHash,address executor,uint256 deadline)"
        "BatchedCall(Call[] calls,bool revertOnFailure)Call(address to,uint256 value,bytes data)"
    );
    uint256 private constant HALF_ORDER = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0;

    /// @notice Accepts native sent to the EOA (a delegated EOA without it would refuse plain transfers).
    receive() external payable {}

    /// @notice Runs a batch the EOA signed (EIP-712, see the contract's notes); anyone may submit it.
    function execute(SignedBatchedCall calldata signedBatchedCall, bytes calldata wrappedSignature) external payable {
        if (signedBatchedCall.executor != address(0) && signedBatchedCall.executor != msg.sender) revert Unauthorized();
        if (signedBatchedCall.deadline != 0 && block.timestamp > signedBatchedCall.deadline) {
            revert SignatureExpired(signedBatchedCall.deadline);
        }
        if (signedBatchedCall.keyHash != bytes32(0)) revert UnsupportedKey(signedBatchedCall.keyHash);
        (bytes memory signature, bytes memory hookData) = abi.decode(wrappedSignature, (bytes, bytes));
        if (hookData.length != 0) revert UnsupportedHookData();
        if (_recover(_digest(signedBatchedCall), signature) != address(this)) revert InvalidSignature();
        _useNonce(signedBatchedCall.nonce);
        _run(signedBatchedCall.batchedCall, signedBatchedCall.nonce);
    }

    /// @notice Runs a batch the EOA sends to itself.
    function execute(BatchedCall calldata batchedCall) external payable {
        if (msg.sender != address(this)) revert Unauthorized();
        _run(batchedCall, 0);
    }

    /// @notice The next sequence number of nonce key `key` (a nonce is `key << 64 | seq`).
    function getSeq(uint256 key) external view returns (uint256) {
        return _storage().seqs[key];
    }

    /// @notice The EIP-712 digest the EOA signs for `signedBatchedCall`.
    function hashSignedBatchedCall(SignedBatchedCall calldata signedBatchedCall) external view returns (bytes32) {
        return _digest(signedBatchedCall);
    }

    function _run(BatchedCall calldata batchedCall, uint256 nonce) private {
        uint256 count = batchedCall.calls.length;
        bool[] memory results = new bool[](count);
        for (uint256 i = 0; i < count; ++i) {
            Call calldata c = batchedCall.calls[i];
            address to = c.to == address(0) ? address(this) : c.to;
            (bool success, bytes memory reason) = to.call{value: c.value}(c.data);
            if (!success && batchedCall.revertOnFailure) {
                assembly ("memory-safe") {
                    revert(add(reason, 0x20), mload(reason))
                }
            }
            results[i] = success;
        }
        emit BatchExecuted(nonce, results);
    }

    function _useNonce(uint256 nonce) private {
        uint256 key = nonce >> 64;
        uint256 seq = uint64(nonce);
        ExecutorStorage storage $ = _storage();
        uint256 expected = $.seqs[key];
        if (seq != expected) revert InvalidNonce(expected, seq);
        $.seqs[key] = expected + 1;
    }

    function _digest(SignedBatchedCall calldata s) private view returns (bytes32) {
        bytes32 domainSeparator = keccak256(
            abi.encode(
                DOMAIN_TYPEHASH,
                NAME_HASH,
                VERSION_HASH,
                block.chainid,
                address(this),
                bytes32(uint256(uint160(_implementation())))
            )
        );
        bytes32 structHash = keccak256(
            abi.encode(
                SIGNED_BATCHED_CALL_TYPEHASH,
                _hashBatchedCall(s.batchedCall),
                s.nonce,
                s.keyHash,
                s.executor,
                s.deadline
            )
        );
        return keccak256(abi.encodePacked("\x19\x01", domainSeparator, structHash));
    }

    function _hashBatchedCall(BatchedCall calldata b) private pure returns (bytes32) {
        uint256 count = b.calls.length;
        bytes32[] memory hashes = new bytes32[](count);
        for (uint256 i = 0; i < count; ++i) {
            Call calldata c = b.calls[i];
            hashes[i] = keccak256(abi.encode(CALL_TYPEHASH, c.to, c.value, keccak256(c.data)));
        }
        return keccak256(abi.encode(BATCHED_CALL_TYPEHASH, keccak256(abi.encodePacked(hashes)), b.revertOnFailure));
    }

    /// @dev The implementation named by the EOA's delegation designator; reverts when not run through one.
    function _implementation() private view returns (address implementation) {
        bytes memory code = address(this).code;
        if (code.length != 23 || code[0] != 0xef || code[1] != 0x01 || code[2] != 0x00) revert NotDelegated();
        assembly ("memory-safe") {
            implementation := shr(96, mload(add(code, 0x23)))
        }
    }

    function _recover(bytes32 digest, bytes memory signature) private pure returns (address signer) {
        if (signature.length != 65) revert InvalidSignature();
        bytes32 r;
        bytes32 s;
        uint8 v;
        assembly ("memory-safe") {
            r := mload(add(signature, 0x20))
            s := mload(add(signature, 0x40))
            v := byte(0, mload(add(signature, 0x60)))
        }
        if (uint256(s) > HALF_ORDER) revert InvalidSignature();
        if (v < 27) v += 27;
        signer = ecrecover(digest, v, r, s);
        if (signer == address(0)) revert InvalidSignature();
    }

    function _storage() private pure returns (ExecutorStorage storage $) {
        assembly ("memory-safe") {
            $.slot := STORAGE_SLOT
        }
    }
}
