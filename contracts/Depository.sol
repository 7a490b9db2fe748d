// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Ownable} from "./lib/Ownable.sol";
import {ReentrancyGuard} from "./lib/ReentrancyGuard.sol";
import {SafeTransfer} from "./lib/SafeTransfer.sol";

/// @title Depository
/// @notice Holds user deposits, each attributed to a request id, until the owner (the solver) releases
///         it: back to the user as a refund, or to the solver as settlement after a fill.
/// @dev Each deposit takes one storage slot: `keccak256(abi.encode(id, depositor, token, amount))`,
///      so `release` can prove what was deposited without storing the fields. A released deposit's slot
///      holds `RELEASED`. Native deposits use `token = address(0)`.
contract Depository is Ownable, ReentrancyGuard {
    using SafeTransfer for address;

    /// @dev Marker stored in a deposit's slot once it is released (no keccak output collides with it in practice).
    bytes32 private constant RELEASED = bytes32(uint256(1));

    /// @notice Number of deposits so far; the next deposit gets this index.
    uint256 public depositCount;
    /// @notice Deposit commitment by index (`RELEASED` once released, zero when unknown).
    mapping(uint256 depositIndex => bytes32 commitment) public deposits;
    /// @notice Tokens left over from partial releases, per token; only the owner can withdraw them.
    mapping(address token => uint256 amount) public unallocated;

    event Deposit(
        bytes32 indexed id, address indexed depositor, address indexed token, uint256 amount, uint256 depositIndex
    );
    event Released(uint256 indexed depositIndex, bytes32 indexed id, address to, uint256 amount);
    event UnallocatedWithdrawn(address indexed token, address to, uint256 amount);

    /// @notice Plain transfers are refused: every deposit must carry a request id.
    error DirectTransferNotAllowed();
    error ZeroAmount();
    error UnknownDeposit(uint256 depositIndex);
    error AlreadyReleased(uint256 depositIndex);
    /// @notice The fields passed to `release` do not match what was deposited at that index.
    error DepositMismatch(uint256 depositIndex);
    error AmountExceedsDeposit(uint256 amount, uint256 depositAmount);
    error AmountExceedsUnallocated(uint256 amount, uint256 available);

    constructor(address owner_) Ownable(owner_) {}

    receive() external payable {
        revert DirectTransferNotAllowed();
    }

    /// @notice Deposits `msg.value` of the native currency for request `id` on behalf of `depositor`.
    function depositNative(address depositor, bytes32 id) external payable nonReentrant returns (uint256 depositIndex) {
        if (msg.value == 0) revert ZeroAmount();
        return _record(id, depositor, address(0), msg.value);
    }

    /// @notice Pulls `amount` of `token` from the caller (approval needed) for request `id` on behalf of
    ///         `depositor`. The recorded amount is what the depository actually received.
    function depositErc20(address depositor, address token, uint256 amount, bytes32 id)
        external
        nonReentrant
        returns (uint256 depositIndex)
    {
        if (amount == 0) revert ZeroAmount();
        if (token == address(0)) revert ZeroAddress();
        uint256 before = token.balanceOf(address(this));
        token.safeTransferFrom(msg.sender, address(this), amount);
        uint256 received = token.balanceOf(address(this)) - before;
        if (received == 0) revert ZeroAmount();
        return _record(id, depositor, token, received);
    }

    /// @notice One release of a batch: the deposit's fields, where its `amount` goes.
    struct Release {
        uint256 depositIndex;
        bytes32 id;
        address depositor;
        address token;
        uint256 depositAmount;
        address to;
        uint256 amount;
    }

    /// @notice Pays out deposit `depositIndex` once: `amount` of it goes to `to`, and any remainder
    ///         becomes `unallocated` (the solver's fee). The other arguments must match the deposit.
    function release(
        uint256 depositIndex,
        bytes32 id,
        address depositor,
        address token,
        uint256 depositAmount,
        address to,
        uint256 amount
    ) external onlyOwner nonReentrant {
        _release(depositIndex, id, depositor, token, depositAmount, to, amount);
    }

    /// @notice Several releases in one transaction (the solver's settlement of filled deposits). All or
    ///         nothing: one release that `release` would refuse (already released, mismatched) reverts the batch.
    function releaseBatch(Release[] calldata releases) external onlyOwner nonReentrant {
        for (uint256 i = 0; i < releases.length; i++) {
            Release calldata r = releases[i];
            _release(r.depositIndex, r.id, r.depositor, r.token, r.depositAmount, r.to, r.amount);
        }
    }

    function _release(
        uint256 depositIndex,
        bytes32 id,
        address depositor,
        address token,
        uint256 depositAmount,
        address to,
        uint256 amount
    ) private {
        if (to == address(0)) revert ZeroAddress();
        bytes32 commitment = deposits[depositIndex];
        if (commitment == bytes32(0)) revert UnknownDeposit(depositIndex);
        if (commitment == RELEASED) revert AlreadyReleased(depositIndex);
        if (commitment != depositHash(id, depositor, token, depositAmount)) revert DepositMismatch(depositIndex);
        if (amount > depositAmount) revert AmountExceedsDeposit(amount, depositAmount);

        deposits[depositIndex] = RELEASED;
        unchecked {
            unallocated[token] += depositAmount - amount;
        }
        emit Released(depositIndex, id, to, amount);
        _pay(token, to, amount);
    }

    /// @notice Withdraws leftovers of partial releases; never touches unreleased deposits.
    function withdrawUnallocated(address token, address to, uint256 amount) external onlyOwner nonReentrant {
        if (to == address(0)) revert ZeroAddress();
        uint256 available = unallocated[token];
        if (amount > available) revert AmountExceedsUnallocated(amount, available);
        unchecked {
            unallocated[token] = available - amount;
        }
        emit UnallocatedWithdrawn(token, to, amount);
        _pay(token, to, amount);
    }

    /// @notice Whether deposit `depositIndex` has been released.
    function isReleased(uint256 depositIndex) external view returns (bool) {
        return deposits[depositIndex] == RELEASED;
    }

    /// @notice The commitment stored for a deposit with these fields.
    function depositHash(bytes32 id, address depositor, address token, uint256 amount) public pure returns (bytes32) {
        return keccak256(abi.encode(id, depositor, token, amount));
    }

    function _record(bytes32 id, address depositor, address token, uint256 amount)
        private
        returns (uint256 depositIndex)
    {
        if (depositor == address(0)) revert ZeroAddress();
        depositIndex = depositCount++;
        deposits[depositIndex] = depositHash(id, depositor, token, amount);
        emit Deposit(id, depositor, token, amount, depositIndex);
    }

    function _pay(address token, address to, uint256 amount) private {
        if (amount == 0) return;
        if (token == address(0)) to.sendNative(amount);
        else token.safeTransfer(to, amount);
    }
}
