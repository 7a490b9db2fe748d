// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "./lib/ERC20.sol";
import {SafeTransfer} from "./lib/SafeTransfer.sol";

/// @title WrappedNative
/// @notice WETH9-style wrapped native token (18 decimals): `deposit` / plain transfers wrap, `withdraw` unwraps.
contract WrappedNative is ERC20 {
    using SafeTransfer for address;

    event Deposit(address indexed dst, uint256 wad);
    event Withdrawal(address indexed src, uint256 wad);

    constructor(string memory name_, string memory symbol_) ERC20(name_, symbol_, 18) {}

    receive() external payable {
        deposit();
    }

    /// @notice Wraps `msg.value` for the caller.
    function deposit() public payable {
        _mint(msg.sender, msg.value);
        emit Deposit(msg.sender, msg.value);
    }

    /// @notice Unwraps `wad` back to native for the caller.
    function withdraw(uint256 wad) external {
        _burn(msg.sender, wad);
        emit Withdrawal(msg.sender, wad);
        msg.sender.sendNative(wad);
    }
}
