// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Call, Result, CallRunner} from "./lib/Call.sol";
import {Ownable} from "./lib/Ownable.sol";
import {SafeTransfer} from "./lib/SafeTransfer.sol";

/// @title OnlyOwnerMulticaller
/// @notice The solver's fill contract. Each request id can be filled once, enforced on chain, so a
///         crash or a retried broadcast can never pay a user twice.
/// @dev Typical fills: native = one call with `value` to the recipient; ERC-20 =
///      `token.transferFrom(solver, recipient, amount)` (the solver approves this contract); calls =
///      move funds to the public Multicaller and call its `multicall` with the user's calls.
contract OnlyOwnerMulticaller is Ownable {
    using SafeTransfer for address;

    /// @notice Whether request `id` has been filled.
    mapping(bytes32 id => bool) public filled;

    event Filled(bytes32 indexed id, uint256 callCount);

    error AlreadyFilled(bytes32 id);

    constructor(address owner_) Ownable(owner_) {}

    /// @notice Accepts native refunds (e.g. from the Multicaller's `refundTo`).
    receive() external payable {}

    /// @notice Fills request `id` by running `calls`; every call must succeed (`allowFailure` is
    ///         ignored) and a failure reverts with the call's revert data, leaving `id` unfilled.
    function fill(bytes32 id, Call[] calldata calls) external payable onlyOwner returns (Result[] memory results) {
        if (filled[id]) revert AlreadyFilled(id);
        filled[id] = true;
        results = CallRunner.run(calls, true);
        emit Filled(id, calls.length);
    }

    /// @notice Moves funds that ended up here (refunds, overpaid value) out; `token = address(0)` for native.
    function withdraw(address token, address to, uint256 amount) external onlyOwner {
        if (to == address(0)) revert ZeroAddress();
        if (token == address(0)) to.sendNative(amount);
        else token.safeTransfer(to, amount);
    }
}
