// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Call, IMulticaller, Result} from "./lib/Call.sol";
import {Ownable} from "./lib/Ownable.sol";
import {ReentrancyGuard} from "./lib/ReentrancyGuard.sol";
import {SafeTransfer} from "./lib/SafeTransfer.sol";

/// @notice The EIP-3009 and EIP-2612 entry points of a token, as far as the proxy uses them.
interface IPermitToken {
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external;

    function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)
        external;

    function allowance(address owner, address spender) external view returns (uint256);

    function approve(address spender, uint256 amount) external returns (bool);
}

/// @notice The depository's ERC-20 deposit.
interface IDepository {
    function depositErc20(address depositor, address token, uint256 amount, bytes32 id) external returns (uint256);
}

/// @title ApprovalProxy
/// @notice Lets users approve one stable address instead of the Multicaller (which anyone can drive):
///         it pulls the approved tokens into the Multicaller and runs the user's calls there at once.
///         It also turns a user's signed permit (EIP-3009 `ReceiveWithAuthorization` to this contract, or an
///         EIP-2612 `permit` for this contract) into a depository deposit for a request, submitted by the
///         gateway (the owner), which pays the gas: the user needs no native currency.
/// @dev The permit deposits are owner-only: neither signature names the request, so anyone else could
///      otherwise attach a user's signed funds to a request of their own.
contract ApprovalProxy is ReentrancyGuard, Ownable {
    using SafeTransfer for address;

    /// @notice The public Multicaller the tokens are moved to.
    address public immutable multicaller;
    /// @notice The depository permit deposits go to.
    address public immutable depository;

    error ArrayLengthMismatch();
    /// @notice The permit could not be used and the proxy's allowance from `owner` is short of `value`.
    error PermitFailed(address owner, uint256 value);

    constructor(address multicaller_, address depository_, address owner_) Ownable(owner_) {
        multicaller = multicaller_;
        depository = depository_;
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

    /// @notice Redeems `from`'s EIP-3009 `ReceiveWithAuthorization` of `value` to this contract and deposits
    ///         it into the depository for request `id` on `from`'s behalf.
    function depositWithAuthorization(
        bytes32 id,
        address token,
        address from,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external onlyOwner nonReentrant returns (uint256) {
        IPermitToken(token).receiveWithAuthorization(from, address(this), value, validAfter, validBefore, nonce, v, r, s);
        return _deposit(id, token, from, value);
    }

    /// @notice Uses `from`'s EIP-2612 permit of `value` for this contract, pulls `value` and deposits it into
    ///         the depository for request `id` on `from`'s behalf. A permit someone else already submitted
    ///         (front-running) is not an error as long as the allowance it set is there.
    function depositWithPermit(
        bytes32 id,
        address token,
        address from,
        uint256 value,
        uint256 deadline,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external onlyOwner nonReentrant returns (uint256) {
        try IPermitToken(token).permit(from, address(this), value, deadline, v, r, s) {}
        catch {
            if (IPermitToken(token).allowance(from, address(this)) < value) revert PermitFailed(from, value);
        }
        token.safeTransferFrom(from, address(this), value);
        return _deposit(id, token, from, value);
    }

    function _deposit(bytes32 id, address token, address from, uint256 value) private returns (uint256) {
        IPermitToken(token).approve(depository, value);
        return IDepository(depository).depositErc20(from, token, value, id);
    }
}
