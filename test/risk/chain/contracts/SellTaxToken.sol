// SPDX-License-Identifier: MIT
// A 10 % sell tax: a tenth of every transfer to the pair (a sell) goes to the owner; buys and other transfers are untaxed.
pragma solidity 0.8.37;

contract SellTaxToken {
    string public name;
    string public symbol;
    uint8 public constant decimals = 18;
    uint256 public totalSupply;
    address public owner;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;
    /** The DEX pair: transfers to it are sells. */
    address public pair;
    uint256 public constant SELL_TAX_PERCENT = 10;

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

    function setPair(address pair_) external {
        require(msg.sender == owner, "SellTaxToken: not the owner");
        pair = pair_;
    }

    function renounceOwnership() external {
        require(msg.sender == owner, "SellTaxToken: not the owner");
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
            require(allowed >= value, "SellTaxToken: allowance");
            allowance[from][msg.sender] = allowed - value;
        }
        _transfer(from, to, value);
        return true;
    }

    function _transfer(address from, address to, uint256 value) internal {
        require(balanceOf[from] >= value, "SellTaxToken: balance");
        balanceOf[from] -= value;
        uint256 tax = to == pair && from != owner ? (value * SELL_TAX_PERCENT) / 100 : 0;
        if (tax > 0) {
            balanceOf[owner] += tax;
            emit Transfer(from, owner, tax);
        }
        balanceOf[to] += value - tax;
        emit Transfer(from, to, value - tax);
    }
}
