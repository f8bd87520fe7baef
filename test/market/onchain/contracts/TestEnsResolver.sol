// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

interface IEnsOwners {
    function owner(bytes32 node) external view returns (address);
}

// Minimal public resolver for local tests: the ETH address record (addr, coin type 60) and the name
// record (reverse records), settable by the node's owner in the registry.
contract TestEnsResolver {
    IEnsOwners public immutable registry;
    mapping(bytes32 => address) private addresses;
    mapping(bytes32 => string) private names;

    constructor(IEnsOwners registry_) {
        registry = registry_;
    }

    modifier onlyOwner(bytes32 node) {
        require(registry.owner(node) == msg.sender, "TestEnsResolver: not the owner");
        _;
    }

    function addr(bytes32 node) external view returns (address) {
        return addresses[node];
    }

    function setAddr(bytes32 node, address a) external onlyOwner(node) {
        addresses[node] = a;
    }

    function name(bytes32 node) external view returns (string memory) {
        return names[node];
    }

    function setName(bytes32 node, string calldata n) external onlyOwner(node) {
        names[node] = n;
    }
}
