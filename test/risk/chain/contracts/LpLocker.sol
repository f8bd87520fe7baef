// SPDX-License-Identifier: MIT
// An LP locker (as UNCX's, Team Finance's or PinkLock's hold LP tokens): lock() takes LP tokens until a time,
// withdraw() gives them back to their owner after it. The tests name its address in LP_LOCKERS_ETHEREUM.
pragma solidity 0.8.37;

interface IERC20Lp {
    function transferFrom(address from, address to, uint256 value) external returns (bool);
    function transfer(address to, uint256 value) external returns (bool);
}

contract LpLocker {
    struct Lock {
        address token;
        address owner;
        uint256 amount;
        uint256 unlockAt;
    }

    Lock[] public locks;

    function lock(address token, uint256 amount, uint256 unlockAt) external returns (uint256 id) {
        require(IERC20Lp(token).transferFrom(msg.sender, address(this), amount), "LpLocker: transfer");
        locks.push(Lock(token, msg.sender, amount, unlockAt));
        return locks.length - 1;
    }

    function withdraw(uint256 id) external {
        Lock storage l = locks[id];
        require(msg.sender == l.owner && block.timestamp >= l.unlockAt && l.amount > 0, "LpLocker: locked");
        uint256 amount = l.amount;
        l.amount = 0;
        require(IERC20Lp(l.token).transfer(l.owner, amount), "LpLocker: transfer");
    }
}
