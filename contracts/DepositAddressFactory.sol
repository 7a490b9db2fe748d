// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Ownable} from "./lib/Ownable.sol";
import {SafeTransfer} from "./lib/SafeTransfer.sol";

interface IDepository {
    function depositNative(address depositor, bytes32 id) external payable returns (uint256);
    function depositErc20(address depositor, address token, uint256 amount, bytes32 id) external returns (uint256);
}

/// @title DepositAddress
/// @notice The code behind every deposit address (EIP-1167 clones of one instance). It accepts plain transfers and
///         moves funds only when its factory says so: into the depository, or to the address's recovery address.
/// @dev `factory` is an immutable of this implementation, so every clone running this code through
///      `delegatecall` answers only to the factory that deployed the implementation.
contract DepositAddress {
    using SafeTransfer for address;

    address public immutable factory;

    error NotFactory(address caller);

    constructor() {
        factory = msg.sender;
    }

    /// @notice Plain native transfers (from a wallet or an exchange) land here.
    receive() external payable {}

    /// @notice Deposits `amount` of `token` (zero address = native) into `depository` for request `id`.
    function deposit(address depository, address token, uint256 amount, address depositor, bytes32 id) external {
        if (msg.sender != factory) revert NotFactory(msg.sender);
        if (token == address(0)) {
            IDepository(depository).depositNative{value: amount}(depositor, id);
        } else {
            _approve(token, depository, amount);
            IDepository(depository).depositErc20(depositor, token, amount, id);
        }
    }

    /// @notice Pays `amount` of `token` to `to` (recovery).
    function withdraw(address token, address to, uint256 amount) external {
        if (msg.sender != factory) revert NotFactory(msg.sender);
        if (token == address(0)) to.sendNative(amount);
        else token.safeTransfer(to, amount);
    }

    function _approve(address token, address spender, uint256 amount) private {
        (bool success, bytes memory data) = token.call(abi.encodeWithSelector(0x095ea7b3, spender, amount));
        if (!success || (data.length != 0 && !abi.decode(data, (bool)))) revert SafeTransfer.TransferFailed(token);
    }
}

/// @title DepositAddressFactory
/// @notice Counterfactual deposit addresses: `computeAddress(key, recoveryAddress)` is the CREATE2 address of an
///         EIP-1167 clone of `DepositAddress`, deployed only when first swept. The gateway derives `key` from the
///         order (strict: the request id) or from the route and parties (open).
///
///         - Only the owner (the gateway's solver) can sweep, and a sweep only ever moves funds into the
///           depository, under request ids and depositors the owner names: nobody can redirect it elsewhere.
///         - Each sweep carries a `sweepId` (the gateway uses one per detected transfer) and is refused a second
///           time, so a transfer is swept at most once even if the gateway's records are lost.
///         - The recovery address bound into the address's salt may withdraw what is still at the address (not yet
///           swept), for when the gateway can neither fill nor refund. The zero recovery address means none.
contract DepositAddressFactory is Ownable {
    /// @notice One leg of a sweep: `amount` deposited for request `id` on behalf of `depositor`.
    struct Leg {
        bytes32 id;
        address depositor;
        uint256 amount;
    }

    address public immutable implementation;
    address public immutable depository;
    /// @notice Sweep ids already used.
    mapping(bytes32 sweepId => bool done) public swept;

    event Swept(
        address indexed depositAddress, bytes32 indexed sweepId, address indexed token, bytes32 id, uint256 amount
    );
    event Recovered(address indexed depositAddress, address indexed token, address to, uint256 amount);

    error AlreadySwept(bytes32 sweepId);
    error NoLegs();
    error ZeroAmount();

    constructor(address owner_, address depository_) Ownable(owner_) {
        if (depository_ == address(0)) revert ZeroAddress();
        depository = depository_;
        implementation = address(new DepositAddress());
    }

    /// @notice The salt of the address for `key` whose recovery address is `recoveryAddress`.
    function saltOf(bytes32 key, address recoveryAddress) public pure returns (bytes32) {
        return keccak256(abi.encode(key, recoveryAddress));
    }

    /// @notice The deposit address for `key` and `recoveryAddress`, whether or not it is deployed yet.
    function computeAddress(bytes32 key, address recoveryAddress) public view returns (address) {
        bytes32 hash = keccak256(
            abi.encodePacked(bytes1(0xff), address(this), saltOf(key, recoveryAddress), keccak256(_cloneCode()))
        );
        return address(uint160(uint256(hash)));
    }

    /// @notice Moves `legs` of `token` (zero address = native) from the address for (`key`, `recoveryAddress`)
    ///         into the depository, deploying the address first when needed. Reverts when `sweepId` was used or
    ///         the address holds less than the legs add up to.
    function sweep(bytes32 key, address recoveryAddress, bytes32 sweepId, address token, Leg[] calldata legs)
        external
        onlyOwner
    {
        if (swept[sweepId]) revert AlreadySwept(sweepId);
        if (legs.length == 0) revert NoLegs();
        swept[sweepId] = true;
        address wallet = _deployed(key, recoveryAddress);
        for (uint256 i = 0; i < legs.length; i++) {
            Leg calldata leg = legs[i];
            if (leg.amount == 0) revert ZeroAmount();
            DepositAddress(payable(wallet)).deposit(depository, token, leg.amount, leg.depositor, leg.id);
            emit Swept(wallet, sweepId, token, leg.id, leg.amount);
        }
    }

    /// @notice The recovery address (the caller) withdraws `amount` of `token` still at its address for `key`.
    function recover(bytes32 key, address token, uint256 amount, address to) external {
        if (to == address(0)) revert ZeroAddress();
        if (amount == 0) revert ZeroAmount();
        address wallet = _deployed(key, msg.sender);
        emit Recovered(wallet, token, to, amount);
        DepositAddress(payable(wallet)).withdraw(token, to, amount);
    }

    function _deployed(bytes32 key, address recoveryAddress) private returns (address wallet) {
        wallet = computeAddress(key, recoveryAddress);
        if (wallet.code.length > 0) return wallet;
        bytes memory code = _cloneCode();
        bytes32 salt = saltOf(key, recoveryAddress);
        address deployed;
        assembly {
            deployed := create2(0, add(code, 0x20), mload(code), salt)
        }
        if (deployed != wallet) revert ZeroAddress();
    }

    /// @dev EIP-1167 minimal proxy creation code for `implementation`.
    function _cloneCode() private view returns (bytes memory) {
        return abi.encodePacked(
            hex"3d602d80600a3d3981f3363d3d373d3d3d363d73", implementation, hex"5af43d82803e903d91602b57fd5bf3"
        );
    }
}
