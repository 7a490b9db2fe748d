// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Call, IMulticaller, Result} from "./lib/Call.sol";
import {ReentrancyGuard} from "./lib/ReentrancyGuard.sol";
import {SafeTransfer} from "./lib/SafeTransfer.sol";

/// @title Erc20Router
/// @notice Single-token entry point to the Multicaller: the common "approve one token, then swap or
///         call" case without building arrays. Same trust model as the ApprovalProxy.
contract Erc20Router is ReentrancyGuard {
    using SafeTransfer for address;

    /// @notice The public Multicaller the tokens are moved to.
    address public immutable multicaller;

    constructor(address multicaller_) {
        multicaller = multicaller_;
    }

    /// @notice Moves `amount` of `token` from the caller to the Multicaller (skipped when `amount` is
    ///         zero), then runs `multicall(calls, refundTo)` there with `msg.value` (`refundTo` zero = the caller).
    function route(address token, uint256 amount, Call[] calldata calls, address refundTo)
        external
        payable
        nonReentrant
        returns (Result[] memory)
    {
        if (amount != 0) token.safeTransferFrom(msg.sender, multicaller, amount);
        return IMulticaller(multicaller).multicall{value: msg.value}(
            calls, refundTo == address(0) ? msg.sender : refundTo
        );
    }
}
