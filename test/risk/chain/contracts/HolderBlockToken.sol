// SPDX-License-Identifier: MIT
// Sells only for newcomers: an address may sell only in the block it last received tokens in. A simulation
// from a fresh address (buy and sell in one call) goes through; every real holder, who bought in an earlier
// block, cannot sell. The owner is exempt.
pragma solidity 0.8.37;

contract HolderBlockToken {
    string public name;
    string public symbol;
    uint8 public constant decimals = 18;
    uint256 public totalSupply;
    address public owner;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;
    /** The DEX pair: transfers from it are buys, transfers to it are sells. */
    address public pair;
    /** The block each address last received tokens in. */
    mapping(address => uint256) public receivedIn;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    constructor(string memory name_, string memory symbol_, uint256 supply) {
        name = name_;
        symbol = symbol_;
        owner = msg.sender;
        totalSupply = supply;
        balanceOf[msg.sender] = supply;
        emit Transfer(address(0), msg.sender, supply);
    }

    modifier onlyOwner() {
        require(msg.sender == owner, "HolderBlockToken: not the owner");
        _;
    }

    function setPair(address pair_) external onlyOwner {
        pair = pair_;
    }

    function renounceOwnership() external onlyOwner {
        owner = address(0);
    }

    function approve(address spender, uint256 value) external returns (bool) {
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function transfer(address to, uint256 value) external returns (bool) {
        _transfer(msg.sender, to, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        if (allowed != type(uint256).max) {
            require(allowed >= value, "HolderBlockToken: allowance");
            allowance[from][msg.sender] = allowed - value;
        }
        _transfer(from, to, value);
        return true;
    }

    function _transfer(address from, address to, uint256 value) internal {
        require(balanceOf[from] >= value, "HolderBlockToken: balance");
        if (to == pair && from != owner) require(receivedIn[from] == block.number, "HolderBlockToken: sells are closed");
        receivedIn[to] = block.number;
        balanceOf[from] -= value;
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }
}
