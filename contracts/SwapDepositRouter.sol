// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ReentrancyGuard} from "./lib/ReentrancyGuard.sol";
import {SafeTransfer} from "./lib/SafeTransfer.sol";

/// @notice The depository's deposit functions, as far as the router uses them.
interface ISwapDepository {
    function depositNative(address depositor, bytes32 id) external payable returns (uint256);
    function depositErc20(address depositor, address token, uint256 amount, bytes32 id) external returns (uint256);
}

/// @title SwapDepositRouter
/// @notice Pays for a request with a token the solver does not hold: in the user's own transaction, swaps it
///         through a DEX router into a currency the solver holds and deposits the whole output into the
///         Depository for the request, naming the user as depositor (so a refund goes back to the user).
/// @dev Users approve this contract, so it never makes a caller-chosen call itself (that call could spend any
///      allowance users gave it). The swap runs in `SwapExecutor`, created here, which only this router may drive
///      and which holds no allowance from anyone and no tokens between transactions. No owner, nothing to
///      configure.
contract SwapDepositRouter is ReentrancyGuard {
    using SafeTransfer for address;

    /// @notice The depository the outputs are deposited into.
    address public immutable depository;
    /// @notice Where the swap runs (the swap's recipient must be this address).
    SwapExecutor public immutable executor;

    error ZeroAmount();
    error ZeroAddress();

    constructor(address depository_) {
        if (depository_ == address(0)) revert ZeroAddress();
        depository = depository_;
        executor = new SwapExecutor(depository_);
    }

    /// @notice Pulls `amountIn` of `tokenIn` from the caller, swaps it by calling `swapTarget` with `swapData`
    ///         (whose recipient must be `executor()`), checks at least `minOut` of `tokenOut` (zero = native) came
    ///         out, and deposits all of it for request `id` on behalf of `depositor`. Input the swap leaves unspent
    ///         goes back to the caller. Reverts whole when the swap fails or pays less than `minOut`.
    /// @return amountOut What the depository received.
    function swapAndDeposit(
        address tokenIn,
        uint256 amountIn,
        address swapTarget,
        bytes calldata swapData,
        address tokenOut,
        uint256 minOut,
        address depositor,
        bytes32 id
    ) external nonReentrant returns (uint256 amountOut) {
        if (amountIn == 0) revert ZeroAmount();
        if (tokenIn == address(0) || swapTarget == address(0) || depositor == address(0)) revert ZeroAddress();
        tokenIn.safeTransferFrom(msg.sender, address(executor), amountIn);
        return executor.run(
            SwapExecutor.Swap({
                tokenIn: tokenIn,
                amountIn: amountIn,
                swapTarget: swapTarget,
                swapData: swapData,
                tokenOut: tokenOut,
                minOut: minOut,
                depositor: depositor,
                id: id,
                payer: msg.sender
            })
        );
    }
}

/// @title SwapExecutor
/// @notice Runs one `SwapDepositRouter` swap: approves the DEX router exactly the input, calls it, and deposits
///         everything it now holds of the output. Only its router may call `run`.
contract SwapExecutor {
    using SafeTransfer for address;

    struct Swap {
        address tokenIn;
        uint256 amountIn;
        address swapTarget;
        bytes swapData;
        address tokenOut;
        uint256 minOut;
        address depositor;
        bytes32 id;
        address payer;
    }

    address public immutable router;
    address public immutable depository;

    error NotRouter(address caller);
    error SwapFailed(bytes reason);
    /// @notice The swap delivered `amountOut`, less than the `minOut` asked for.
    error InsufficientOutput(uint256 amountOut, uint256 minOut);

    constructor(address depository_) {
        router = msg.sender;
        depository = depository_;
    }

    /// @notice Native output of a swap (a router unwrapping WETH) arrives here.
    receive() external payable {}

    function run(Swap calldata s) external returns (uint256 amountOut) {
        if (msg.sender != router) revert NotRouter(msg.sender);
        bool nativeOut = s.tokenOut == address(0);
        uint256 before = nativeOut ? address(this).balance : s.tokenOut.balanceOf(address(this));

        s.tokenIn.safeApprove(s.swapTarget, s.amountIn);
        (bool ok, bytes memory reason) = s.swapTarget.call(s.swapData);
        if (!ok) revert SwapFailed(reason);
        // No allowance outlives the call, whatever the target spent of it.
        s.tokenIn.safeApprove(s.swapTarget, 0);

        uint256 held = nativeOut ? address(this).balance : s.tokenOut.balanceOf(address(this));
        if (held - before < s.minOut) revert InsufficientOutput(held - before, s.minOut);
        // Input the target did not spend goes back to whoever paid it.
        if (s.tokenIn != s.tokenOut) {
            uint256 unspent = s.tokenIn.balanceOf(address(this));
            if (unspent != 0) s.tokenIn.safeTransfer(s.payer, unspent);
        }
        // The whole balance is deposited, so nothing stays here between transactions.
        amountOut = held;
        if (amountOut == 0) return 0;
        if (nativeOut) {
            ISwapDepository(depository).depositNative{value: amountOut}(s.depositor, s.id);
        } else {
            s.tokenOut.safeApprove(depository, amountOut);
            ISwapDepository(depository).depositErc20(s.depositor, s.tokenOut, amountOut, s.id);
        }
    }
}
