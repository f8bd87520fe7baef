// SPDX-License-Identifier: MIT
// The implementation behind Eip1967Proxy: a plain ERC-20 initialised through the proxy (storage, no constructor).
pragma solidity 0.8.37;

contract UpgradeableToken {
    string public name;
    string public symbol;
    uint8 public constant decimals = 18;
    uint256 public totalSupply;
    address public owner;
    bool private initialized;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    function initialize(string memory name_, string memory symbol_, uint256 supply, address owner_) external {
        require(!initialized, "UpgradeableToken: initialized");
        initialized = true;
        name = name_;
        symbol = symbol_;
        owner = owner_;
        totalSupply = supply;
        balanceOf[owner_] = supply;
        emit Transfer(address(0), owner_, supply);
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
            require(allowed >= value, "UpgradeableToken: allowance");
            allowance[from][msg.sender] = allowed - value;
        }
        _transfer(from, to, value);
        return true;
    }

    function _transfer(address from, address to, uint256 value) internal {
        require(balanceOf[from] >= value, "UpgradeableToken: balance");
        balanceOf[from] -= value;
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }
}
