// SPDX-License-Identifier: MIT
// The buy-and-sell simulator of the token risk check (src/sources/token-simulator.ts holds its compiled
// runtime code; test/token-simulator.test.ts recompiles this file and checks the two match). It is never
// deployed: one eth_call places it by a state override at two addresses (the buyer and a second holder),
// funds the buyer by a balance override, and calls simulate(). Nothing is ever sent to a chain.
//
// simulate(): wrap native → buy the token through a Uniswap V2-style router with the fee-on-transfer-
// supporting swap → transfer what was received to the second holder → the holder sells it back. Each step
// records the amount the pair's reserves promised (the router's getAmountsOut) and the amount that
// arrived; a step that reverts is recorded with its revert data and ends the simulation (a failed
// transfer does not: the buyer then sells itself). The server turns the figures into taxes.
//
// The trading restrictions (issue 38) are further functions of the same code, each one eth_call (or one block
// of eth_simulateV1) with the same kind of state override, the code also placed at the token's largest
// holders found in its recent Transfer logs:
//   simulateLater(): simulate() and the block it ran in (number, timestamp), to prove a block override applied;
//   limits(): the largest buy and sell that go through (bisection) and the largest holding buys can reach;
//   holderSells(): a sell from each of the 3 largest holders among the candidates given;
//   cooldownFirst() then, in a later block, sellAll(): a second sell after a first one.
// Every probe of a bisection runs in a call that reverts (its state undone) and reports through its revert data.
pragma solidity 0.8.37;

interface IERC20Min {
    function balanceOf(address) external view returns (uint256);
    function totalSupply() external view returns (uint256);
}

interface IV2Pair {
    function getReserves() external view returns (uint112, uint112, uint32);
    function token0() external view returns (address);
}

interface IWrappedNative {
    function deposit() external payable;
}

interface IV2Router {
    function factory() external view returns (address);
    function getAmountsOut(uint256 amountIn, address[] calldata path) external view returns (uint256[] memory);
    function getAmountsIn(uint256 amountOut, address[] calldata path) external view returns (uint256[] memory);
    function swapExactTokensForTokensSupportingFeeOnTransferTokens(
        uint256 amountIn,
        uint256 amountOutMin,
        address[] calldata path,
        address to,
        uint256 deadline
    ) external;
}

interface IV2Factory {
    function getPair(address, address) external view returns (address);
}

contract TokenSimulator {
    /** Result.failedStep: nothing failed, or the step whose revert data is kept. */
    uint8 constant NONE = 0;
    uint8 constant QUOTE = 1;
    uint8 constant BUY = 2;
    uint8 constant TRANSFER = 3;
    uint8 constant SELL = 4;

    struct Result {
        address pair;
        uint256 buyIn;
        uint256 buyExpected;
        uint256 buyReceived;
        bool transferOk;
        uint256 transferReceived;
        bool sellOk;
        uint256 sellIn;
        uint256 sellExpected;
        uint256 sellReceived;
        /** The step whose revert data is kept: the quote or the buy (which end it), the sell, or else the transfer. */
        uint8 failedStep;
        bytes revertData;
    }

    /**
     * Buys `token` with the wrapped native coin (the smaller of `maxIn` and a thousandth of the pair's
     * wrapped-native reserve, so the trade barely moves the price), moves it to `holder` (another copy of
     * this contract) and sells it back from there. `pair` is zero when the router's factory has no pair of
     * the token with the wrapped native coin.
     */
    function simulate(address router, address wrapped, address token, address holder, uint256 maxIn) external returns (Result memory r) {
        r.pair = IV2Factory(IV2Router(router).factory()).getPair(wrapped, token);
        if (r.pair == address(0)) return r;

        uint256 amountIn = IERC20Min(wrapped).balanceOf(r.pair) / 1000;
        if (amountIn > maxIn) amountIn = maxIn;
        if (amountIn > address(this).balance) amountIn = address(this).balance;
        r.buyIn = amountIn;
        IWrappedNative(wrapped).deposit{value: amountIn}();
        _approve(wrapped, router, amountIn);

        address[] memory path = new address[](2);
        path[0] = wrapped;
        path[1] = token;
        try IV2Router(router).getAmountsOut(amountIn, path) returns (uint256[] memory amounts) {
            r.buyExpected = amounts[1];
        } catch (bytes memory reason) {
            (r.failedStep, r.revertData) = (QUOTE, reason);
            return r;
        }
        uint256 before = IERC20Min(token).balanceOf(address(this));
        try IV2Router(router).swapExactTokensForTokensSupportingFeeOnTransferTokens(amountIn, 0, path, address(this), block.timestamp) {
            r.buyReceived = _gain(IERC20Min(token).balanceOf(address(this)), before);
        } catch (bytes memory reason) {
            (r.failedStep, r.revertData) = (BUY, reason);
            return r;
        }
        if (r.buyReceived == 0) return r;

        // A holder's transfer to another address (no pair involved): what arrives measures the transfer tax.
        uint256 held = IERC20Min(token).balanceOf(holder);
        (bool sent, bytes memory transferReason) = token.call(abi.encodeWithSelector(0xa9059cbb, holder, r.buyReceived));
        r.transferOk = sent && _returnedTrue(transferReason);
        if (r.transferOk) {
            r.transferReceived = _gain(IERC20Min(token).balanceOf(holder), held);
        } else {
            (r.failedStep, r.revertData) = (TRANSFER, transferReason);
        }

        // The sell, from the holder (or from this buyer when the transfer failed).
        r.sellIn = r.transferOk ? r.transferReceived : r.buyReceived;
        if (_half) r.sellIn /= 2;
        if (r.sellIn == 0) return r;
        address seller = r.transferOk ? holder : address(this);
        try TokenSimulator(payable(seller)).sell(router, wrapped, token, r.sellIn) returns (uint256 expected, uint256 received) {
            (r.sellOk, r.sellExpected, r.sellReceived) = (true, expected, received);
        } catch (bytes memory reason) {
            (r.failedStep, r.revertData) = (SELL, reason);
        }
    }

    /** Sells `amount` of `token` held here for the wrapped native coin; reverts with the swap's reason when it fails. */
    function sell(address router, address wrapped, address token, uint256 amount) external returns (uint256 expected, uint256 received) {
        _approve(token, router, amount);
        address[] memory path = new address[](2);
        path[0] = token;
        path[1] = wrapped;
        expected = IV2Router(router).getAmountsOut(amount, path)[1];
        uint256 before = IERC20Min(wrapped).balanceOf(address(this));
        IV2Router(router).swapExactTokensForTokensSupportingFeeOnTransferTokens(amount, 0, path, address(this), block.timestamp);
        received = _gain(IERC20Min(wrapped).balanceOf(address(this)), before);
    }

    /** approve() that accepts tokens returning nothing (USDT-style) as well as true; reverts otherwise. */
    function _approve(address token, address spender, uint256 amount) private {
        (bool ok, bytes memory data) = token.call(abi.encodeWithSelector(0x095ea7b3, spender, amount));
        if (!ok || !_returnedTrue(data)) {
            assembly {
                revert(add(data, 32), mload(data))
            }
        }
    }

    function _returnedTrue(bytes memory data) private pure returns (bool) {
        return data.length == 0 || (data.length >= 32 && abi.decode(data, (bool)));
    }

    /** How much a balance grew (0 when a token's balanceOf went down instead). */
    function _gain(uint256 afterBalance, uint256 beforeBalance) private pure returns (uint256) {
        return afterBalance > beforeBalance ? afterBalance - beforeBalance : 0;
    }


    // ---- trading restrictions -------------------------------------------------------------------------

    /** A probe went through (its state is undone by this revert); `amount`: tokens received or sold. */
    error Passed(uint256 amount);
    /** A sell probe could not be funded: the funding holder's transfer to the seller failed. */
    error Unfunded();
    /** fillWallet()'s outcome: the holding reached, and whether a further buy failed before the depth. */
    error Filled(uint256 holding, bool limited);

    /** Bisection steps: the limit is found to within a millionth of the depth. */
    uint256 constant STEPS = 20;
    /** Buys of at most this many chunks fill a wallet. */
    uint256 constant CHUNKS = 24;
    address constant DEAD = 0x000000000000000000000000000000000000dEaD;

    struct Limits {
        /** The largest trade tried, in tokens: half the pair's token reserve. */
        uint256 depth;
        /** Largest buy (tokens out of the pair) that went through; `depth` when none failed; 0 when even a tiny one failed. */
        uint256 maxBuy;
        /** Largest sell (tokens in) that went through, up to `sellCeiling`; 0 when even a tiny one failed. */
        uint256 maxSell;
        /** The largest sell that could be tried: the funding holder's balance, at most `depth`; 0 = no funder. */
        uint256 sellCeiling;
        /** Whether some sell probe could not be funded (then maxSell says nothing of a limit). */
        bool sellUnfunded;
        /** Largest holding buys into one fresh wallet reached, and whether a further buy then failed. */
        uint256 maxWallet;
        bool walletLimited;
        uint256 supply;
    }

    /** simulate(), and the block it ran in: a block override that was not applied shows here. */
    function simulateLater(address router, address wrapped, address token, address holder, uint256 maxIn)
        external
        returns (Result memory r, uint256 number, uint256 time)
    {
        r = this.simulate(router, wrapped, token, holder, maxIn);
        (number, time) = (block.number, block.timestamp);
    }

    /** The router, wrapped native coin and token a restriction check trades. */
    struct Market {
        address router;
        address wrapped;
        address token;
    }

    /**
     * The largest buy and sell that go through, by bisection between a tiny trade and `depth` (half the pair's
     * token reserve), and the largest holding buys into one fresh wallet reach. Sells are funded by a transfer
     * from the largest of `candidates` (which carry this code) to `seller` (this code too).
     */
    function limits(address router, address wrapped, address token, address seller, address[] calldata candidates) external returns (Limits memory l) {
        Market memory m = Market(router, wrapped, token);
        address pair = IV2Factory(IV2Router(router).factory()).getPair(wrapped, token);
        if (pair == address(0)) return l;
        (uint112 r0, uint112 r1, ) = IV2Pair(pair).getReserves();
        l.depth = (IV2Pair(pair).token0() == token ? uint256(r0) : uint256(r1)) / 2;
        l.supply = IERC20Min(token).totalSupply();
        if (l.depth < 1000) return l;
        _buyLimits(m, l);
        (address funder, uint256 held) = _largestHolder(token, pair, router, candidates, address(0));
        if (funder != address(0)) {
            l.sellCeiling = held < l.depth ? held : l.depth;
            if (l.sellCeiling >= _tiny(l.depth)) l.maxSell = _largest(1, m, funder, seller, _tiny(l.depth), l.sellCeiling);
            l.sellUnfunded = _unfunded;
        }
    }

    function _tiny(uint256 depth) private pure returns (uint256) {
        return depth / 1_000_000 == 0 ? 1 : depth / 1_000_000;
    }

    /** The largest buy into a fresh wallet, then the holding buys of that size reach in it. */
    function _buyLimits(Market memory m, Limits memory l) private {
        address wallet = address(uint160(uint256(keccak256(abi.encode(address(this), "wallet")))));
        l.maxBuy = _largest(0, m, address(0), wallet, _tiny(l.depth), l.depth);
        if (l.maxBuy == 0) return;
        try this.fillWallet(m.router, m.wrapped, m.token, wallet, l.maxBuy, l.depth) {} catch (bytes memory reason) {
            if (_selector(reason) == Filled.selector) (l.maxWallet, l.walletLimited) = abi.decode(_args(reason), (uint256, bool));
        }
    }

    bool private _unfunded;

    /** The largest amount in [lo, hi] whose probe goes through (hi when it does, 0 when lo does not). */
    function _largest(uint8 kind, Market memory m, address funder, address to, uint256 lo, uint256 hi) private returns (uint256) {
        if (_probe(kind, m, funder, to, hi)) return hi;
        if (!_probe(kind, m, funder, to, lo)) return 0;
        for (uint256 i = 0; i < STEPS && hi - lo > 1; i++) {
            uint256 mid = lo + (hi - lo) / 2;
            if (_probe(kind, m, funder, to, mid)) lo = mid;
            else hi = mid;
        }
        return lo;
    }

    /** One probe, its state undone: a buy of `amount` tokens into `to` (kind 0), or a sell of `amount` by `to` funded by `funder` (kind 1). */
    function _probe(uint8 kind, Market memory m, address funder, address to, uint256 amount) private returns (bool) {
        try this.probe(kind, m.router, m.wrapped, m.token, funder, to, amount) {} catch (bytes memory reason) {
            bytes4 sel = _selector(reason);
            if (sel == Unfunded.selector) _unfunded = true;
            return sel == Passed.selector;
        }
        return false;
    }

    /** Always reverts: Passed when the trade went through, else the trade's own revert data. */
    function probe(uint8 kind, address router, address wrapped, address token, address funder, address to, uint256 amount) external {
        require(msg.sender == address(this));
        if (kind == 0) revert Passed(_buyExact(Market(router, wrapped, token), to, amount));
        if (funder != to) {
            try TokenSimulator(payable(funder)).give(token, to, amount) {} catch {
                revert Unfunded();
            }
        }
        TokenSimulator(payable(to)).sell(router, wrapped, token, amount);
        revert Passed(amount);
    }

    /** Buys `tokensOut` (as the pair's reserves price it) into `to`; returns what arrived; reverts when the buy does. */
    function _buyExact(Market memory m, address to, uint256 tokensOut) private returns (uint256) {
        address[] memory path = new address[](2);
        (path[0], path[1]) = (m.wrapped, m.token);
        uint256 amountIn = IV2Router(m.router).getAmountsIn(tokensOut, path)[0];
        IWrappedNative(m.wrapped).deposit{value: amountIn}();
        _approve(m.wrapped, m.router, amountIn);
        uint256 before = IERC20Min(m.token).balanceOf(to);
        IV2Router(m.router).swapExactTokensForTokensSupportingFeeOnTransferTokens(amountIn, 0, path, to, block.timestamp);
        return _gain(IERC20Min(m.token).balanceOf(to), before);
    }

    /** A buy of `tokensOut` into `to` that stays (unlike a probe's); reverts when the buy does. */
    function buyInto(address router, address wrapped, address token, address to, uint256 tokensOut) external {
        require(msg.sender == address(this));
        _buyExact(Market(router, wrapped, token), to, tokensOut);
    }

    /** Moves `amount` of `token` held here to `to`; reverts when the token refuses. */
    function give(address token, address to, uint256 amount) external {
        (bool ok, bytes memory data) = token.call(abi.encodeWithSelector(0xa9059cbb, to, amount));
        require(ok && _returnedTrue(data));
    }

    /**
     * Always reverts with Filled: buys of `chunk` tokens into `wallet` until one fails or `depth` is held; then
     * the largest further buy that goes through (bisection) is made, and the holding reached is reported.
     */
    function fillWallet(address router, address wrapped, address token, address wallet, uint256 chunk, uint256 depth) external {
        require(msg.sender == address(this));
        Market memory m = Market(router, wrapped, token);
        uint256 held = 0;
        for (uint256 i = 0; i < CHUNKS && held < depth; i++) {
            uint256 size = depth - held < chunk ? depth - held : chunk;
            bool bought;
            try this.buyInto(router, wrapped, token, wallet, size) {
                bought = true;
            } catch {}
            if (bought) {
                held = IERC20Min(token).balanceOf(wallet);
                continue;
            }
            uint256 top = _largest(0, m, address(0), wallet, 1, size);
            if (top > 0) _buyExact(m, wallet, top);
            revert Filled(IERC20Min(token).balanceOf(wallet), true);
        }
        revert Filled(held, false);
    }

    /**
     * A sell of min(`amount`, its balance) from each of the 3 largest holders among `candidates` (which carry
     * this code) but the pair, the token, the router, `exclude` (the owner) and burn addresses; each sell's state
     * undone. `tried` lists the holders in order (zero past the last), `ok` whether each one's sell went through.
     */
    function holderSells(address router, address wrapped, address token, address[] calldata candidates, address exclude, uint256 amount)
        external
        returns (address[3] memory tried, bool[3] memory ok)
    {
        Market memory m = Market(router, wrapped, token);
        address pair = IV2Factory(IV2Router(router).factory()).getPair(wrapped, token);
        if (pair == address(0)) return (tried, ok);
        address[] memory left = candidates;
        for (uint256 n = 0; n < 3; n++) {
            (address holder, uint256 held) = _largestHolder(m.token, pair, m.router, left, exclude);
            if (holder == address(0)) break;
            _drop(left, holder);
            tried[n] = holder;
            ok[n] = _probe(1, m, holder, holder, held < amount ? held : amount);
        }
    }

    function _drop(address[] memory list, address a) private pure {
        for (uint256 i = 0; i < list.length; i++) if (list[i] == a) list[i] = address(0);
    }

    /** The candidate holding most of `token`, none of the excluded; zero when none holds any. */
    function _largestHolder(address token, address pair, address router, address[] memory candidates, address exclude) private view returns (address best, uint256 most) {
        for (uint256 i = 0; i < candidates.length; i++) {
            address c = candidates[i];
            if (c == address(0) || c == pair || c == token || c == router || c == exclude || c == DEAD) continue;
            uint256 b = IERC20Min(token).balanceOf(c);
            if (b > most) (best, most) = (c, b);
        }
    }

    /** The first of the cooldown check's two blocks: a buy moved to `holder`, who sells half of it. Kept (no revert). */
    function cooldownFirst(address router, address wrapped, address token, address holder, uint256 maxIn) external returns (bool firstOk) {
        _half = true;
        Result memory r = this.simulate(router, wrapped, token, holder, maxIn);
        _half = false;
        return r.sellOk;
    }

    /** Set while cooldownFirst() runs simulate(): the holder sells half of what it received. */
    bool private _half;

    /** The second block: sells all this address holds; whether that went through. */
    function sellAll(address router, address wrapped, address token) external returns (bool) {
        uint256 held = IERC20Min(token).balanceOf(address(this));
        if (held == 0) return false;
        try this.sell(router, wrapped, token, held) returns (uint256, uint256) {
            return true;
        } catch {
            return false;
        }
    }

    function _selector(bytes memory reason) private pure returns (bytes4 sel) {
        if (reason.length < 4) return bytes4(0);
        assembly {
            sel := mload(add(reason, 32))
        }
    }

    /** A revert's data after its selector. */
    function _args(bytes memory reason) private pure returns (bytes memory args) {
        args = new bytes(reason.length - 4);
        for (uint256 i = 0; i < args.length; i++) args[i] = reason[i + 4];
    }

    receive() external payable {}
}
