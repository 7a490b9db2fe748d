// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "./lib/ERC20.sol";
import {Ownable} from "./lib/Ownable.sol";

/// @title MinorToken
/// @notice Plain 18-decimal devnet token with owner `mint`: a long-tail asset with no permit support.
contract MinorToken is ERC20, Ownable {
    constructor(string memory name_, string memory symbol_, address owner_) ERC20(name_, symbol_, 18) Ownable(owner_) {}

    /// @notice Creates `amount` new tokens for `to`.
    function mint(address to, uint256 amount) external onlyOwner {
        _mint(to, amount);
    }
}
