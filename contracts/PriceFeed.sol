// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Ownable} from "./lib/Ownable.sol";

/// @title PriceFeed
/// @notice Devnet price feed with the Chainlink AggregatorV3Interface, so pricing code reads devnet and
///         real networks the same way. The owner sets each new answer; every answer is a new round.
contract PriceFeed is Ownable {
    struct Round {
        int256 answer;
        uint64 startedAt;
        uint64 updatedAt;
    }

    uint8 public immutable decimals;
    string public description;
    uint256 public constant version = 4;

    /// @notice Id of the newest round (rounds start at 1).
    uint80 public latestRound;
    mapping(uint80 roundId => Round) private _rounds;

    /// @dev Chainlink's event, so existing tooling can follow updates.
    event AnswerUpdated(int256 indexed current, uint256 indexed roundId, uint256 updatedAt);

    error NoDataPresent(uint80 roundId);

    constructor(uint8 decimals_, string memory description_, int256 initialAnswer, address owner_) Ownable(owner_) {
        decimals = decimals_;
        description = description_;
        _setAnswer(initialAnswer);
    }

    /// @notice Publishes `answer` as a new round updated now.
    function setAnswer(int256 answer) external onlyOwner {
        _setAnswer(answer);
    }

    function latestRoundData()
        external
        view
        returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)
    {
        return getRoundData(latestRound);
    }

    function getRoundData(uint80 roundId)
        public
        view
        returns (uint80, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)
    {
        Round memory round = _rounds[roundId];
        if (round.updatedAt == 0) revert NoDataPresent(roundId);
        return (roundId, round.answer, round.startedAt, round.updatedAt, roundId);
    }

    /// @notice The newest answer (legacy AggregatorInterface).
    function latestAnswer() external view returns (int256) {
        return _rounds[latestRound].answer;
    }

    function _setAnswer(int256 answer) private {
        uint80 roundId = ++latestRound;
        _rounds[roundId] = Round(answer, uint64(block.timestamp), uint64(block.timestamp));
        emit AnswerUpdated(answer, roundId, block.timestamp);
    }
}
