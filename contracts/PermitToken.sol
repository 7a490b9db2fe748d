// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "./lib/ERC20.sol";
import {Ownable} from "./lib/Ownable.sol";
import {Signatures} from "./lib/Signatures.sol";

/// @title PermitToken
/// @notice Devnet stablecoin with EIP-2612 `permit` and WITHOUT EIP-3009 (no transfer authorizations): the
///         shape of most permit tokens on real chains, so the gateway's `eip2612` permit deposits run on chain.
///         6 decimals, owner `mint`.
/// @dev EIP-712 domain `{ name, version: "2", chainId, verifyingContract }`. Like many deployed 2612 tokens it
///      has no EIP-5267 `eip712Domain()`: readers take `name()` and `version()`. The separator is recomputed if
///      the chain id changes (fork safety).
contract PermitToken is ERC20, Ownable {
    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 public constant PERMIT_TYPEHASH =
        keccak256("Permit(address owner,address spender,uint256 value,uint256 nonce,uint256 deadline)");

    /// @notice EIP-712 domain version.
    string public constant version = "2";

    uint256 private immutable _cachedChainId;
    bytes32 private immutable _cachedDomainSeparator;

    /// @notice EIP-2612 permit nonces.
    mapping(address owner => uint256) public nonces;

    error PermitExpired(uint256 deadline);
    error InvalidSignature();

    constructor(string memory name_, string memory symbol_, address owner_) ERC20(name_, symbol_, 6) Ownable(owner_) {
        _cachedChainId = block.chainid;
        _cachedDomainSeparator = _domainSeparator();
    }

    /// @notice Creates `amount` new tokens for `to`.
    function mint(address to, uint256 amount) external onlyOwner {
        _mint(to, amount);
    }

    // solhint-disable-next-line func-name-mixedcase
    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return block.chainid == _cachedChainId ? _cachedDomainSeparator : _domainSeparator();
    }

    /// @notice Sets `spender`'s allowance over `owner_`'s tokens from `owner_`'s signature.
    function permit(address owner_, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)
        external
    {
        if (block.timestamp > deadline) revert PermitExpired(deadline);
        bytes32 structHash = keccak256(abi.encode(PERMIT_TYPEHASH, owner_, spender, value, nonces[owner_]++, deadline));
        bytes32 digest = keccak256(abi.encodePacked("\x19\x01", DOMAIN_SEPARATOR(), structHash));
        address signer = Signatures.recover(digest, v, r, s);
        if (signer == address(0) || signer != owner_) revert InvalidSignature();
        _approve(owner_, spender, value);
    }

    function _domainSeparator() private view returns (bytes32) {
        return keccak256(
            abi.encode(DOMAIN_TYPEHASH, keccak256(bytes(name)), keccak256(bytes(version)), block.chainid, address(this))
        );
    }
}
