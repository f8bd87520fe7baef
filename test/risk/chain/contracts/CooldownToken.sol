// SPDX-License-Identifier: MIT
// A sell cooldown: an address that sold may not sell again for 60 seconds (a second sell in the next block
// reverts while the first went through). Buys and transfers between holders are not limited; the owner is exempt.
pragma solidity 0.8.37;

contract CooldownToken {
    string public name;
    string public symbol;
    uint8 public constant decimals = 18;
    uint256 public totalSupply;
    address public owner;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;
    /** The DEX pair: transfers from it are buys, transfers to it are sells. */
    address public pair;
    uint256 public constant COOLDOWN_S = 60;
    /** When each address last sold. */
    mapping(address => uint256) public lastSell;

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
        require(msg.sender == owner, "CooldownToken: not the owner");
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
            require(allowed >= value, "CooldownToken: allowance");
            allowance[from][msg.sender] = allowed - value;
        }
        _transfer(from, to, value);
        return true;
    }

    function _transfer(address from, address to, uint256 value) internal {
        require(balanceOf[from] >= value, "CooldownToken: balance");
        if (to == pair && from != owner) {
            require(lastSell[from] == 0 || block.timestamp >= lastSell[from] + COOLDOWN_S, "CooldownToken: sell cooldown");
            lastSell[from] = block.timestamp;
        }
        balanceOf[from] -= value;
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }
}
