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
pragma solidity 0.8.37;

interface IERC20Min {
    function balanceOf(address) external view returns (uint256);
}

interface IWrappedNative {
    function deposit() external payable;
}

interface IV2Router {
    function factory() external view returns (address);
    function getAmountsOut(uint256 amountIn, address[] calldata path) external view returns (uint256[] memory);
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

    receive() external payable {}
}
