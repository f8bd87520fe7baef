// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

// An ERC-20 whose symbol() returns bytes32, as early tokens (MKR, SAI) do, for local tests.
contract Bytes32SymbolToken {
    bytes32 public constant symbol = "MKR";
    uint8 public constant decimals = 18;
    mapping(address => uint256) public balanceOf;

    function mint(address to, uint256 value) external {
        balanceOf[to] += value;
    }
}
