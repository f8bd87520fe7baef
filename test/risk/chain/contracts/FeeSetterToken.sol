// SPDX-License-Identifier: MIT
// A plain ERC-20 (PlainToken) with one owner-only power. The owner can set the buy and sell fees at any time: setFees(uint256,uint256), as launch-token templates name it (the fees are stored; this token charges none yet).
pragma solidity 0.8.37;

contract FeeSetterToken {
    string public name;
    string public symbol;
    uint8 public constant decimals = 18;
    uint256 public totalSupply;
    address public owner;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

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

    uint256 public buyFee;
    uint256 public sellFee;

    function setFees(uint256 buy, uint256 sell) external {
        require(msg.sender == owner, "FeeSetterToken: not the owner");
        (buyFee, sellFee) = (buy, sell);
    }

    function renounceOwnership() external {
        require(msg.sender == owner, "FeeSetterToken: not the owner");
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
            require(allowed >= value, "FeeSetterToken: allowance");
            allowance[from][msg.sender] = allowed - value;
        }
        _transfer(from, to, value);
        return true;
    }

    function _transfer(address from, address to, uint256 value) internal {
        require(balanceOf[from] >= value, "FeeSetterToken: balance");
        balanceOf[from] -= value;
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }
}
