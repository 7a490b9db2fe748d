// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @notice One call run by a multicaller: `to.call{value: value}(data)`.
/// @dev `allowFailure = false` makes the whole batch revert with the call's own revert data.
struct Call {
    address to;
    bytes data;
    uint256 value;
    bool allowFailure;
}

/// @notice Outcome of one call: its success flag and its return (or revert) data.
struct Result {
    bool success;
    bytes returnData;
}

/// @notice The Multicaller's entry point, as the proxies call it.
interface IMulticaller {
    function multicall(Call[] calldata calls, address refundTo) external payable returns (Result[] memory);
}

/// @notice Runs calls and bubbles revert data unchanged, so callers see the real reason.
library CallRunner {
    /// @dev Runs `calls` in order. A failing call with `allowFailure = false`, or any failing call
    ///      when `requireSuccess` is set, reverts with the callee's revert data.
    function run(Call[] calldata calls, bool requireSuccess) internal returns (Result[] memory results) {
        results = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; ++i) {
            Call calldata c = calls[i];
            (bool success, bytes memory returnData) = c.to.call{value: c.value}(c.data);
            if (!success && (requireSuccess || !c.allowFailure)) bubble(returnData);
            results[i] = Result(success, returnData);
        }
    }

    /// @dev Reverts with `returnData` as-is (empty data gives an empty revert).
    function bubble(bytes memory returnData) internal pure {
        assembly ("memory-safe") {
            revert(add(returnData, 0x20), mload(returnData))
        }
    }
}
