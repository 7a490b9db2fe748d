// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Call, Result, CallRunner} from "./lib/Call.sol";
import {ReentrancyGuard} from "./lib/ReentrancyGuard.sol";
import {SafeTransfer} from "./lib/SafeTransfer.sol";

/// @title Multicaller
/// @notice The public router: runs a user's calls (swaps, mints, ...) with funds sent along or moved in
///         just before by the approval proxy or the solver's fill. Anyone may call it.
/// @dev It must hold nothing between transactions: leftover native goes to `refundTo` at the end of
///      `multicall`, and leftover tokens are swept by ending the batch with a call to this contract's
///      `cleanupErc20s` / `cleanupNative`. Whatever is left here can be taken by anyone, and for the same
///      reason nobody (the solver least of all) should ever approve this contract to spend tokens.
///
///      Signatures:
///      - `multicall((address to, bytes data, uint256 value, bool allowFailure)[] calls, address refundTo)
///         payable returns ((bool success, bytes returnData)[])`
///      - `cleanupErc20s(address[] tokens, address[] recipients)`: the full balance of `tokens[i]` to `recipients[i]`
///      - `cleanupNative(uint256 amount, address recipient)`: `amount` of native (0 = the full balance) to `recipient`
contract Multicaller is ReentrancyGuard {
    using SafeTransfer for address;

    error ArrayLengthMismatch();

    /// @notice Accepts native (e.g. from unwrapping or a swap paying out ETH) during a batch.
    receive() external payable {}

    /// @notice Runs `calls` in order, then sends this contract's native balance to `refundTo`
    ///         (`msg.sender` when zero). A failing call with `allowFailure = false` reverts the batch
    ///         with that call's revert data.
    function multicall(Call[] calldata calls, address refundTo)
        external
        payable
        nonReentrant
        returns (Result[] memory results)
    {
        results = CallRunner.run(calls, false);
        uint256 leftover = address(this).balance;
        if (leftover != 0) (refundTo == address(0) ? msg.sender : refundTo).sendNative(leftover);
    }

    /// @notice Sends this contract's full balance of each `tokens[i]` to `recipients[i]` (zero balances are skipped).
    function cleanupErc20s(address[] calldata tokens, address[] calldata recipients) external {
        if (tokens.length != recipients.length) revert ArrayLengthMismatch();
        for (uint256 i = 0; i < tokens.length; ++i) {
            uint256 balance = tokens[i].balanceOf(address(this));
            if (balance != 0) tokens[i].safeTransfer(recipients[i], balance);
        }
    }

    /// @notice Sends `amount` of native (0 = the full balance) to `recipient`.
    function cleanupNative(uint256 amount, address recipient) external {
        uint256 value = amount == 0 ? address(this).balance : amount;
        if (value != 0) recipient.sendNative(value);
    }
}
