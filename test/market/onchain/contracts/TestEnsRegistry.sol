// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

// Minimal ENS registry for local tests: an owner and a resolver per node (namehash), as ENS's
// registry keeps them. The deployer owns the root; owners create subnodes and set resolvers.
contract TestEnsRegistry {
    mapping(bytes32 => address) public owner;
    mapping(bytes32 => address) public resolver;

    constructor() {
        owner[bytes32(0)] = msg.sender;
    }

    modifier onlyOwner(bytes32 node) {
        require(owner[node] == msg.sender, "TestEnsRegistry: not the owner");
        _;
    }

    function setSubnodeOwner(bytes32 node, bytes32 label, address newOwner) external onlyOwner(node) returns (bytes32 subnode) {
        subnode = keccak256(abi.encodePacked(node, label));
        owner[subnode] = newOwner;
    }

    function setResolver(bytes32 node, address newResolver) external onlyOwner(node) {
        resolver[node] = newResolver;
    }
}
