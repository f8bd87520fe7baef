// SPDX-License-Identifier: MIT
// The owner side of a Safe (safe-global/safe-smart-account's OwnerManager) as the owner-kind read sees it:
// getThreshold() and getOwners(), with the owners and threshold given at construction. It holds no funds and
// executes nothing; the check only reads these two views.
pragma solidity 0.8.37;

contract SafeWallet {
    address[] private owners;
    uint256 private threshold;

    constructor(address[] memory owners_, uint256 threshold_) {
        require(threshold_ >= 1 && threshold_ <= owners_.length, "SafeWallet: threshold");
        owners = owners_;
        threshold = threshold_;
    }

    function getThreshold() external view returns (uint256) {
        return threshold;
    }

    function getOwners() external view returns (address[] memory) {
        return owners;
    }
}
