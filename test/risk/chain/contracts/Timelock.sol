// SPDX-License-Identifier: MIT
// A timelock with OpenZeppelin TimelockController's getMinDelay(): a call is scheduled by the proposer and runs
// no sooner than the minimum delay later. Enough to own a token or administer a proxy in the tests.
pragma solidity 0.8.37;

contract Timelock {
    uint256 private immutable minDelay;
    address public immutable proposer;
    mapping(bytes32 => uint256) public readyAt;

    constructor(uint256 minDelay_, address proposer_) {
        minDelay = minDelay_;
        proposer = proposer_;
    }

    function getMinDelay() external view returns (uint256) {
        return minDelay;
    }

    function schedule(address target, bytes calldata data) external {
        require(msg.sender == proposer, "Timelock: not the proposer");
        readyAt[keccak256(abi.encode(target, data))] = block.timestamp + minDelay;
    }

    function execute(address target, bytes calldata data) external {
        uint256 at = readyAt[keccak256(abi.encode(target, data))];
        require(at != 0 && block.timestamp >= at, "Timelock: not ready");
        (bool ok, ) = target.call(data);
        require(ok, "Timelock: call failed");
    }
}
