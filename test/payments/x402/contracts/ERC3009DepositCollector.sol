// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

// The ERC-3009 deposit collector of the x402 batch-settlement scheme, written for local tests from the scheme's
// EVM specification and what @x402/evm 2.27 signs: the payer signs ReceiveWithAuthorization(from = payer,
// to = this collector, value = deposit, validAfter, validBefore, nonce = keccak256(abi.encode(channelId, salt)));
// collectorData = abi.encode(uint256 validAfter, uint256 validBefore, uint256 salt, bytes signature).
// Binding the nonce to the channel id means an authorisation can fund only the channel it was signed for.
//
// @x402/evm hard-codes this contract's address (ERC3009_DEPOSIT_COLLECTOR_ADDRESS): the tests deploy it with the
// settlement contract's canonical address as the constructor argument and copy the runtime code there
// (an immutable lives in the runtime code, so it survives hardhat_setCode). Not audited; for tests only.

interface IERC3009Receive {
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external;
    function transfer(address to, uint256 value) external returns (bool);
}

contract ERC3009DepositCollector {
    /// The batch-settlement contract, the only caller allowed and where collected tokens go.
    address public immutable settlement;

    constructor(address settlement_) {
        settlement = settlement_;
    }

    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata data) external {
        require(msg.sender == settlement, "only the settlement contract");
        (uint256 validAfter, uint256 validBefore, uint256 salt, bytes memory signature) =
            abi.decode(data, (uint256, uint256, uint256, bytes));
        bytes32 nonce = keccak256(abi.encode(channelId, salt));
        IERC3009Receive(token).receiveWithAuthorization(payer, address(this), amount, validAfter, validBefore, nonce, signature);
        (bool ok, bytes memory ret) = token.call(abi.encodeWithSelector(IERC3009Receive.transfer.selector, settlement, amount));
        require(ok && (ret.length == 0 || abi.decode(ret, (bool))), "token transfer failed");
    }
}
