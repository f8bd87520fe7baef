// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

// A contract that answers balanceOf, decimals and symbol with whatever it was deployed with, for local
// tests of tokens that are not what ERC-20 says: decimals() beyond uint8, a symbol of NUL padding.
contract OddToken {
    uint256 public decimals;
    string public symbol;
    mapping(address => uint256) public balanceOf;

    constructor(uint256 decimals_, string memory symbol_) {
        decimals = decimals_;
        symbol = symbol_;
    }

    function mint(address to, uint256 value) external {
        balanceOf[to] += value;
    }
}
