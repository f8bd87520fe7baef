// SPDX-License-Identifier: MIT
// A maximum wallet: no address but the owner and the pair may hold more than 1 % of the supply after a
// transfer in (a buy or a transfer from a holder); buys and sells of any size are otherwise allowed.
pragma solidity 0.8.37;

contract MaxWalletToken {
    string public name;
    string public symbol;
    uint8 public constant decimals = 18;
    uint256 public totalSupply;
    address public owner;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;
    /** The DEX pair: transfers from it are buys, transfers to it are sells. */
    address public pair;
    /** The largest holding: 1 % of the supply. */
    uint256 public maxWallet;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    constructor(string memory name_, string memory symbol_, uint256 supply) {
        name = name_;
        symbol = symbol_;
        owner = msg.sender;
        totalSupply = supply;
        balanceOf[msg.sender] = supply;
        maxWallet = supply / 100;
        emit Transfer(address(0), msg.sender, supply);
    }

    modifier onlyOwner() {
        require(msg.sender == owner, "MaxWalletToken: not the owner");
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
            require(allowed >= value, "MaxWalletToken: allowance");
            allowance[from][msg.sender] = allowed - value;
        }
        _transfer(from, to, value);
        return true;
    }

    function _transfer(address from, address to, uint256 value) internal {
        require(balanceOf[from] >= value, "MaxWalletToken: balance");
        if (to != pair && to != owner) require(balanceOf[to] + value <= maxWallet, "MaxWalletToken: over the max wallet");
        balanceOf[from] -= value;
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }
}
