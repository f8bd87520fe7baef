// SPDX-License-Identifier: MIT
// Trading not open: every buy and sell (a transfer from or to the pair) reverts until the owner calls
// enableTrading(), which it never does here; the owner itself can add liquidity.
pragma solidity 0.8.37;

contract TradingDisabledToken {
    string public name;
    string public symbol;
    uint8 public constant decimals = 18;
    uint256 public totalSupply;
    address public owner;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;
    /** The DEX pair: transfers from it are buys, transfers to it are sells. */
    address public pair;
    bool public tradingOpen;

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
        require(msg.sender == owner, "TradingDisabledToken: not the owner");
        _;
    }

    function setPair(address pair_) external onlyOwner {
        pair = pair_;
    }

    function renounceOwnership() external onlyOwner {
        owner = address(0);
    }

    function enableTrading() external onlyOwner {
        tradingOpen = true;
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
            require(allowed >= value, "TradingDisabledToken: allowance");
            allowance[from][msg.sender] = allowed - value;
        }
        _transfer(from, to, value);
        return true;
    }

    function _transfer(address from, address to, uint256 value) internal {
        require(balanceOf[from] >= value, "TradingDisabledToken: balance");
        bool trade = from == pair || to == pair;
        if (trade && from != owner && to != owner) require(tradingOpen, "TradingDisabledToken: trading is not open");
        balanceOf[from] -= value;
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }
}
