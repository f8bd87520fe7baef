// SPDX-License-Identifier: MIT
// A transparent-style EIP-1967 proxy: the implementation and the admin in the standard slots, every call
// delegated to the implementation. The admin could upgrade it (upgradeTo); the test only reads the slots.
pragma solidity 0.8.37;

contract Eip1967Proxy {
    // bytes32(uint256(keccak256("eip1967.proxy.implementation")) - 1) and (... "eip1967.proxy.admin") - 1
    bytes32 private constant IMPLEMENTATION_SLOT = 0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc;
    bytes32 private constant ADMIN_SLOT = 0xb53127684a568b3173ae13b9f8a6016e243e63b6e8ee1178d6a717850b5d6103;

    constructor(address implementation, address admin, bytes memory init) {
        assembly {
            sstore(IMPLEMENTATION_SLOT, implementation)
            sstore(ADMIN_SLOT, admin)
        }
        if (init.length > 0) {
            (bool ok, bytes memory reason) = implementation.delegatecall(init);
            if (!ok) {
                assembly {
                    revert(add(reason, 32), mload(reason))
                }
            }
        }
    }

    function upgradeTo(address implementation) external {
        address admin;
        assembly {
            admin := sload(ADMIN_SLOT)
        }
        require(msg.sender == admin, "Eip1967Proxy: not the admin");
        assembly {
            sstore(IMPLEMENTATION_SLOT, implementation)
        }
    }

    fallback() external payable {
        assembly {
            let implementation := sload(IMPLEMENTATION_SLOT)
            calldatacopy(0, 0, calldatasize())
            let ok := delegatecall(gas(), implementation, 0, calldatasize(), 0, 0)
            returndatacopy(0, 0, returndatasize())
            switch ok
            case 0 { revert(0, returndatasize()) }
            default { return(0, returndatasize()) }
        }
    }
}
