// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

// The x402 `batch-settlement` channel contract, written for local tests from the scheme's EVM specification
// (x402 repository, specs/schemes/batch-settlement/scheme_batch_settlement_evm.md) and the calls @x402/evm 2.27
// makes: unidirectional payment channels keyed by the EIP-712 hash of an immutable ChannelConfig; the payer
// deposits once (through a deposit collector), signs cumulative vouchers off chain, the receiver side claims
// them in batches (accounting only) and settles claimed funds to the receiver in one transfer; unclaimed escrow
// goes back through a cooperative refund or, unilaterally, a timed withdrawal.
//
// @x402/evm hard-codes where this contract lives (BATCH_SETTLEMENT_ADDRESS); the tests deploy it anywhere and
// copy its runtime code there with hardhat_setCode. Nothing here depends on the deployment address: the EIP-712
// domain is computed from address(this) and block.chainid at every call. Not audited; for tests only.

interface IERC20Minimal {
    function balanceOf(address who) external view returns (uint256);
    function transfer(address to, uint256 value) external returns (bool);
}

/// Pulls `amount` of `token` from `payer` into the settlement contract, authorised by `data`.
interface IDepositCollector {
    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata data) external;
}

interface IERC1271 {
    function isValidSignature(bytes32 digest, bytes calldata signature) external view returns (bytes4);
}

contract BatchSettlement {
    struct ChannelConfig {
        address payer;
        address payerAuthorizer; // signs vouchers (ECDSA); zero = the payer signs (EOA or ERC-1271)
        address receiver;
        address receiverAuthorizer; // authorises claims and refunds
        address token;
        uint40 withdrawDelay;
        bytes32 salt;
    }

    struct Voucher {
        ChannelConfig channel;
        uint128 maxClaimableAmount; // cumulative ceiling signed by the payer side
    }

    struct VoucherClaim {
        Voucher voucher;
        bytes signature;
        uint128 totalClaimed; // new cumulative claimed total for the channel, at most maxClaimableAmount
    }

    struct ChannelState {
        uint128 balance; // deposited minus refunds and withdrawals
        uint128 totalClaimed; // cumulative amount claimed by the receiver side
    }

    struct PendingWithdrawal {
        uint128 amount;
        uint40 initiatedAt;
    }

    struct ReceiverState {
        uint128 totalClaimed;
        uint128 totalSettled;
    }

    uint40 public constant MIN_WITHDRAW_DELAY = 15 minutes;
    uint40 public constant MAX_WITHDRAW_DELAY = 30 days;

    bytes32 public constant CHANNEL_CONFIG_TYPEHASH = keccak256(
        "ChannelConfig(address payer,address payerAuthorizer,address receiver,address receiverAuthorizer,address token,uint40 withdrawDelay,bytes32 salt)"
    );
    bytes32 public constant VOUCHER_TYPEHASH = keccak256("Voucher(bytes32 channelId,uint128 maxClaimableAmount)");
    bytes32 public constant REFUND_TYPEHASH = keccak256("Refund(bytes32 channelId,uint256 nonce,uint128 amount)");
    bytes32 public constant CLAIM_ENTRY_TYPEHASH =
        keccak256("ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)");
    bytes32 public constant CLAIM_BATCH_TYPEHASH = keccak256(
        "ClaimBatch(ClaimEntry[] claims)ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)"
    );
    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");

    mapping(bytes32 => ChannelState) public channels;
    mapping(bytes32 => PendingWithdrawal) public pendingWithdrawals;
    mapping(bytes32 => uint256) public refundNonce;
    mapping(address => mapping(address => ReceiverState)) public receivers;

    uint256 private _entered; // reentrancy guard (storage: survives hardhat_setCode as zero)

    event ChannelCreated(bytes32 indexed channelId, ChannelConfig config);
    event ChannelClosed(bytes32 indexed channelId, ChannelConfig config);
    event Deposited(bytes32 indexed channelId, address indexed sender, uint128 amount, uint128 balance);
    event Claimed(bytes32 indexed channelId, address indexed receiver, uint128 amount, uint128 totalClaimed);
    event Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount);
    event Refunded(bytes32 indexed channelId, address indexed payer, uint128 amount, uint256 nonce);
    event WithdrawInitiated(bytes32 indexed channelId, uint128 amount, uint40 finalizableAt);
    event WithdrawFinalized(bytes32 indexed channelId, address indexed payer, uint128 amount);

    modifier nonReentrant() {
        require(_entered == 0, "reentrant call");
        _entered = 1;
        _;
        _entered = 0;
    }

    // --- EIP-712 ------------------------------------------------------------------------------------------

    function domainSeparator() public view returns (bytes32) {
        return keccak256(
            abi.encode(DOMAIN_TYPEHASH, keccak256("x402 Batch Settlement"), keccak256("1"), block.chainid, address(this))
        );
    }

    function _hashTyped(bytes32 structHash) internal view returns (bytes32) {
        return keccak256(abi.encodePacked("\x19\x01", domainSeparator(), structHash));
    }

    /// The channel id is the full EIP-712 digest of the config, so it binds chain and contract too.
    function getChannelId(ChannelConfig calldata config) public view returns (bytes32) {
        return _hashTyped(
            keccak256(
                abi.encode(
                    CHANNEL_CONFIG_TYPEHASH,
                    config.payer,
                    config.payerAuthorizer,
                    config.receiver,
                    config.receiverAuthorizer,
                    config.token,
                    config.withdrawDelay,
                    config.salt
                )
            )
        );
    }

    function getVoucherDigest(bytes32 channelId, uint128 maxClaimableAmount) public view returns (bytes32) {
        return _hashTyped(keccak256(abi.encode(VOUCHER_TYPEHASH, channelId, maxClaimableAmount)));
    }

    function getRefundDigest(bytes32 channelId, uint256 nonce, uint128 amount) public view returns (bytes32) {
        return _hashTyped(keccak256(abi.encode(REFUND_TYPEHASH, channelId, nonce, amount)));
    }

    function getClaimBatchDigest(VoucherClaim[] calldata voucherClaims) public view returns (bytes32) {
        bytes32[] memory entries = new bytes32[](voucherClaims.length);
        for (uint256 i = 0; i < voucherClaims.length; i++) {
            entries[i] = keccak256(
                abi.encode(
                    CLAIM_ENTRY_TYPEHASH,
                    getChannelId(voucherClaims[i].voucher.channel),
                    voucherClaims[i].voucher.maxClaimableAmount,
                    voucherClaims[i].totalClaimed
                )
            );
        }
        return _hashTyped(keccak256(abi.encode(CLAIM_BATCH_TYPEHASH, keccak256(abi.encodePacked(entries)))));
    }

    // --- deposit ------------------------------------------------------------------------------------------

    /// Creates the channel on its first deposit; `collector` pulls the tokens from the payer (e.g. ERC-3009).
    function deposit(ChannelConfig calldata config, uint128 amount, address collector, bytes calldata collectorData)
        external
        nonReentrant
    {
        require(amount > 0, "zero deposit");
        require(config.payer != address(0) && config.receiver != address(0) && config.token != address(0), "zero address");
        require(config.receiverAuthorizer != address(0), "zero receiver authorizer");
        require(
            config.withdrawDelay >= MIN_WITHDRAW_DELAY && config.withdrawDelay <= MAX_WITHDRAW_DELAY,
            "withdraw delay out of range"
        );
        bytes32 channelId = getChannelId(config);
        uint256 before = IERC20Minimal(config.token).balanceOf(address(this));
        IDepositCollector(collector).collect(config.payer, config.token, amount, channelId, collectorData);
        require(IERC20Minimal(config.token).balanceOf(address(this)) - before == amount, "collector moved a different amount");

        ChannelState storage ch = channels[channelId];
        if (ch.balance == ch.totalClaimed && ch.totalClaimed == 0) emit ChannelCreated(channelId, config);
        ch.balance += amount;
        emit Deposited(channelId, msg.sender, amount, ch.balance);
    }

    // --- claim and settle ---------------------------------------------------------------------------------

    /// Claims vouchers; the caller must be the receiver or the receiver authorizer of every channel.
    function claim(VoucherClaim[] calldata voucherClaims) external nonReentrant {
        for (uint256 i = 0; i < voucherClaims.length; i++) {
            ChannelConfig calldata c = voucherClaims[i].voucher.channel;
            require(msg.sender == c.receiver || msg.sender == c.receiverAuthorizer, "not the receiver side");
            _claim(voucherClaims[i]);
        }
    }

    /// Claims vouchers on the strength of one EIP-712 ClaimBatch signature by the (shared) receiver authorizer;
    /// anyone may relay it.
    function claimWithSignature(VoucherClaim[] calldata voucherClaims, bytes calldata authorizerSignature)
        external
        nonReentrant
    {
        require(voucherClaims.length > 0, "no claims");
        address authorizer = voucherClaims[0].voucher.channel.receiverAuthorizer;
        for (uint256 i = 1; i < voucherClaims.length; i++) {
            require(voucherClaims[i].voucher.channel.receiverAuthorizer == authorizer, "mixed receiver authorizers");
        }
        require(_isValidSignature(authorizer, getClaimBatchDigest(voucherClaims), authorizerSignature), "invalid claim authorization");
        for (uint256 i = 0; i < voucherClaims.length; i++) {
            _claim(voucherClaims[i]);
        }
    }

    function _claim(VoucherClaim calldata vc) internal {
        ChannelConfig calldata c = vc.voucher.channel;
        bytes32 channelId = getChannelId(c);
        ChannelState storage ch = channels[channelId];
        require(vc.totalClaimed <= vc.voucher.maxClaimableAmount, "claim exceeds voucher");
        require(vc.totalClaimed <= ch.balance, "claim exceeds balance");
        // Cumulative vouchers: a claim at or below what is already claimed changes nothing.
        if (vc.totalClaimed <= ch.totalClaimed) return;
        bytes32 digest = getVoucherDigest(channelId, vc.voucher.maxClaimableAmount);
        bool ok = c.payerAuthorizer != address(0)
            ? _recover(digest, vc.signature) == c.payerAuthorizer
            : _isValidSignature(c.payer, digest, vc.signature);
        require(ok, "invalid voucher signature");
        uint128 delta = vc.totalClaimed - ch.totalClaimed;
        ch.totalClaimed = vc.totalClaimed;
        receivers[c.receiver][c.token].totalClaimed += delta;
        emit Claimed(channelId, c.receiver, delta, vc.totalClaimed);
    }

    /// Transfers everything claimed but not yet settled for (receiver, token) to the receiver. Permissionless.
    function settle(address receiver, address token) external nonReentrant {
        ReceiverState storage r = receivers[receiver][token];
        uint128 amount = r.totalClaimed - r.totalSettled;
        r.totalSettled = r.totalClaimed;
        if (amount > 0) _transfer(token, receiver, amount);
        emit Settled(receiver, token, msg.sender, amount);
    }

    // --- refunds and withdrawals --------------------------------------------------------------------------

    /// Cooperative refund by the receiver side.
    function refund(ChannelConfig calldata config, uint128 amount) external nonReentrant {
        require(msg.sender == config.receiver || msg.sender == config.receiverAuthorizer, "not the receiver side");
        _refund(config, getChannelId(config), amount);
    }

    /// Cooperative refund authorised by an EIP-712 Refund signature of the receiver authorizer; anyone may relay it.
    function refundWithSignature(
        ChannelConfig calldata config,
        uint128 amount,
        uint256 nonce,
        bytes calldata receiverAuthorizerSignature
    ) external nonReentrant {
        bytes32 channelId = getChannelId(config);
        require(nonce == refundNonce[channelId], "stale refund nonce");
        require(
            _isValidSignature(config.receiverAuthorizer, getRefundDigest(channelId, nonce, amount), receiverAuthorizerSignature),
            "invalid refund authorization"
        );
        _refund(config, channelId, amount);
    }

    /// The nonce advances first, so even a refund that moves nothing invalidates earlier refund signatures.
    function _refund(ChannelConfig calldata config, bytes32 channelId, uint128 amount) internal {
        require(amount > 0, "zero refund");
        uint256 nonce = refundNonce[channelId]++;
        ChannelState storage ch = channels[channelId];
        uint128 available = ch.balance - ch.totalClaimed;
        uint128 actual = amount < available ? amount : available;
        if (actual == 0) return;
        ch.balance -= actual;
        PendingWithdrawal storage pw = pendingWithdrawals[channelId];
        if (pw.initiatedAt != 0) {
            if (actual >= pw.amount) delete pendingWithdrawals[channelId];
            else pw.amount -= actual;
        }
        _transfer(config.token, config.payer, actual);
        emit Refunded(channelId, config.payer, actual, nonce);
        if (ch.balance == 0 && ch.totalClaimed == 0) emit ChannelClosed(channelId, config);
    }

    /// Unilateral exit, step 1: the payer side announces a withdrawal of unclaimed escrow.
    function initiateWithdraw(ChannelConfig calldata config, uint128 amount) external nonReentrant {
        require(msg.sender == config.payer || msg.sender == config.payerAuthorizer, "not the payer side");
        bytes32 channelId = getChannelId(config);
        ChannelState storage ch = channels[channelId];
        require(amount > 0 && amount <= ch.balance - ch.totalClaimed, "amount exceeds unclaimed escrow");
        require(pendingWithdrawals[channelId].initiatedAt == 0, "withdrawal already pending");
        pendingWithdrawals[channelId] = PendingWithdrawal(amount, uint40(block.timestamp));
        emit WithdrawInitiated(channelId, amount, uint40(block.timestamp) + config.withdrawDelay);
    }

    /// Unilateral exit, step 2: after the withdraw delay, whatever is still unclaimed (up to the amount) goes back.
    function finalizeWithdraw(ChannelConfig calldata config) external nonReentrant {
        require(msg.sender == config.payer || msg.sender == config.payerAuthorizer, "not the payer side");
        bytes32 channelId = getChannelId(config);
        PendingWithdrawal memory pw = pendingWithdrawals[channelId];
        require(pw.initiatedAt != 0, "no pending withdrawal");
        require(block.timestamp >= uint256(pw.initiatedAt) + config.withdrawDelay, "withdraw delay not elapsed");
        delete pendingWithdrawals[channelId];
        ChannelState storage ch = channels[channelId];
        uint128 available = ch.balance - ch.totalClaimed;
        uint128 actual = pw.amount < available ? pw.amount : available;
        ch.balance -= actual;
        if (actual > 0) _transfer(config.token, config.payer, actual);
        emit WithdrawFinalized(channelId, config.payer, actual);
        if (ch.balance == 0 && ch.totalClaimed == 0) emit ChannelClosed(channelId, config);
    }

    // --- batching -----------------------------------------------------------------------------------------

    /// Runs several calls on this contract in one transaction (e.g. claim, then refund); all or nothing.
    function multicall(bytes[] calldata data) external returns (bytes[] memory results) {
        results = new bytes[](data.length);
        for (uint256 i = 0; i < data.length; i++) {
            (bool ok, bytes memory ret) = address(this).delegatecall(data[i]);
            if (!ok) {
                assembly { revert(add(ret, 0x20), mload(ret)) }
            }
            results[i] = ret;
        }
    }

    // --- helpers ------------------------------------------------------------------------------------------

    function _transfer(address token, address to, uint256 amount) internal {
        (bool ok, bytes memory ret) = token.call(abi.encodeWithSelector(IERC20Minimal.transfer.selector, to, amount));
        require(ok && (ret.length == 0 || abi.decode(ret, (bool))), "token transfer failed");
    }

    function _recover(bytes32 digest, bytes calldata signature) internal pure returns (address) {
        if (signature.length != 65) return address(0);
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        if (v < 27) v += 27;
        if (uint256(s) > 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0) return address(0);
        return ecrecover(digest, v, r, s);
    }

    /// ECDSA for accounts without code, ERC-1271 for contracts.
    function _isValidSignature(address signer, bytes32 digest, bytes calldata signature) internal view returns (bool) {
        if (signer == address(0)) return false;
        if (signer.code.length == 0) return _recover(digest, signature) == signer;
        (bool ok, bytes memory ret) =
            signer.staticcall(abi.encodeWithSelector(IERC1271.isValidSignature.selector, digest, signature));
        return ok && ret.length >= 32 && abi.decode(ret, (bytes4)) == IERC1271.isValidSignature.selector;
    }
}
