// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Ownable} from "./lib/Ownable.sol";
import {SafeTransfer} from "./lib/SafeTransfer.sol";

/// @title Receiver
/// @notice Takes native deposits tagged with a request id and forwards them straight to the solver, so
///         the funds never rest here. The `FundsForwarded` event is what the deposit watcher reads.
contract Receiver is Ownable {
    using SafeTransfer for address;

    /// @notice Where forwarded funds go.
    address public solver;

    event FundsForwarded(bytes32 indexed id, address indexed from, uint256 amount);
    event SolverChanged(address indexed previousSolver, address indexed newSolver);

    /// @notice Plain transfers are refused: every deposit must carry a request id.
    error DirectTransferNotAllowed();
    error ZeroAmount();

    constructor(address owner_, address solver_) Ownable(owner_) {
        if (solver_ == address(0)) revert ZeroAddress();
        solver = solver_;
        emit SolverChanged(address(0), solver_);
    }

    receive() external payable {
        revert DirectTransferNotAllowed();
    }

    /// @notice Forwards `msg.value` to the solver as the deposit for request `id`.
    function forward(bytes32 id) external payable {
        if (msg.value == 0) revert ZeroAmount();
        emit FundsForwarded(id, msg.sender, msg.value);
        solver.sendNative(msg.value);
    }

    /// @notice Points forwarding at a new solver address.
    function setSolver(address newSolver) external onlyOwner {
        if (newSolver == address(0)) revert ZeroAddress();
        emit SolverChanged(solver, newSolver);
        solver = newSolver;
    }
}
