// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title Ownable
/// @notice Single-owner access control shared by the gateway's contracts.
/// @dev The owner is passed to the constructor so the devnet can deploy from one key and hand
///      ownership to the solver without an extra transaction.
abstract contract Ownable {
    /// @notice The account allowed to call `onlyOwner` functions.
    address public owner;

    event OwnershipTransferred(address indexed previousOwner, address indexed newOwner);

    /// @notice The caller is not the owner.
    error Unauthorized(address caller);
    /// @notice An address argument that must be set was the zero address.
    error ZeroAddress();

    constructor(address initialOwner) {
        if (initialOwner == address(0)) revert ZeroAddress();
        owner = initialOwner;
        emit OwnershipTransferred(address(0), initialOwner);
    }

    modifier onlyOwner() {
        if (msg.sender != owner) revert Unauthorized(msg.sender);
        _;
    }

    /// @notice Hands the contract to `newOwner` (one step: the new owner must be correct).
    function transferOwnership(address newOwner) external onlyOwner {
        if (newOwner == address(0)) revert ZeroAddress();
        emit OwnershipTransferred(owner, newOwner);
        owner = newOwner;
    }
}
