// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @notice Token and native transfers that also work with tokens returning nothing (USDT style).
library SafeTransfer {
    error TransferFailed(address token);
    error NativeTransferFailed(address to, uint256 amount);

    function safeTransfer(address token, address to, uint256 amount) internal {
        _callOptionalReturn(token, abi.encodeWithSelector(0xa9059cbb, to, amount));
    }

    function safeTransferFrom(address token, address from, address to, uint256 amount) internal {
        _callOptionalReturn(token, abi.encodeWithSelector(0x23b872dd, from, to, amount));
    }

    /// @dev `approve(spender, amount)`; tokens that return nothing are accepted.
    function safeApprove(address token, address spender, uint256 amount) internal {
        _callOptionalReturn(token, abi.encodeWithSelector(0x095ea7b3, spender, amount));
    }

    function sendNative(address to, uint256 amount) internal {
        (bool success,) = to.call{value: amount}("");
        if (!success) revert NativeTransferFailed(to, amount);
    }

    /// @dev `balanceOf(account)`; reverts for an address that is not a token.
    function balanceOf(address token, address account) internal view returns (uint256) {
        (bool success, bytes memory data) = token.staticcall(abi.encodeWithSelector(0x70a08231, account));
        if (!success || data.length < 32) revert TransferFailed(token);
        return abi.decode(data, (uint256));
    }

    function _callOptionalReturn(address token, bytes memory data) private {
        if (token.code.length == 0) revert TransferFailed(token);
        (bool success, bytes memory returnData) = token.call(data);
        if (!success || (returnData.length != 0 && !abi.decode(returnData, (bool)))) revert TransferFailed(token);
    }
}
