// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Call, IMulticaller, Result} from "./lib/Call.sol";
import {ReentrancyGuard} from "./lib/ReentrancyGuard.sol";
import {SafeTransfer} from "./lib/SafeTransfer.sol";

/// @title ApprovalProxy
/// @notice Lets users approve one stable address instead of the Multicaller (which anyone can drive):
///         it pulls the approved tokens into the Multicaller and runs the user's calls there at once.
contract ApprovalProxy is ReentrancyGuard {
    using SafeTransfer for address;

    /// @notice The public Multicaller the tokens are moved to.
    address public immutable multicaller;

    error ArrayLengthMismatch();

    constructor(address multicaller_) {
        multicaller = multicaller_;
    }

    /// @notice Moves `amounts[i]` of `tokens[i]` from the caller to the Multicaller, then runs
    ///         `multicall(calls, refundTo)` there with `msg.value` (`refundTo` zero = the caller).
    function transferAndMulticall(
        address[] calldata tokens,
        uint256[] calldata amounts,
        Call[] calldata calls,
        address refundTo
    ) external payable nonReentrant returns (Result[] memory) {
        if (tokens.length != amounts.length) revert ArrayLengthMismatch();
        for (uint256 i = 0; i < tokens.length; ++i) {
            tokens[i].safeTransferFrom(msg.sender, multicaller, amounts[i]);
        }
        return IMulticaller(multicaller).multicall{value: msg.value}(
            calls, refundTo == address(0) ? msg.sender : refundTo
        );
    }
}
