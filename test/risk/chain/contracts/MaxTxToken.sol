// SPDX-License-Identifier: MIT
// A maximum transaction: a buy or a sell (a transfer from or to the pair) of more than 0.5 % of the supply
// reverts; the owner (who adds the liquidity) is exempt. Transfers between holders are not limited.
pragma solidity 0.8.37;

contract MaxTxToken {
    string public name;
    string public symbol;
    uint8 public constant decimals = 18;
    uint256 public totalSupply;
    address public owner;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;
    /** The DEX pair: transfers from it are buys, transfers to it are sells. */
    address public pair;
    /** The largest buy or sell: 0.5 % of the supply. */
    uint256 public maxTx;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    constructor(string memory name_, string memory symbol_, uint256 supply) {
        name = name_;
        symbol = symbol_;
        owner = msg.sender;
        totalSupply = supply;
        balanceOf[msg.sender] = supply;
        maxTx = supply / 200;
        emit Transfer(address(0), msg.sender, supply);
    }

    modifier onlyOwner() {
        require(msg.sender == owner, "MaxTxToken: not the owner");
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
            require(allowed >= value, "MaxTxToken: allowance");
            allowance[from][msg.sender] = allowed - value;
        }
        _transfer(from, to, value);
        return true;
    }

    function _transfer(address from, address to, uint256 value) internal {
        require(balanceOf[from] >= value, "MaxTxToken: balance");
        bool trade = from == pair || to == pair;
        if (trade && from != owner && to != owner) require(value <= maxTx, "MaxTxToken: over the max transaction");
        balanceOf[from] -= value;
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }
}
