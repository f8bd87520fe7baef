// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

interface IEnsResolvers {
    function resolver(bytes32 node) external view returns (address);
}

interface INameResolver {
    function name(bytes32 node) external view returns (string memory);
}

interface IAddrResolver {
    function addr(bytes32 node) external view returns (address);
}

// The two functions viem 2.57 calls on ENS's Universal Resolver, over TestEnsRegistry, for local tests:
//   resolveWithGateways(bytes dnsName, bytes data, string[] gateways) → (bytes result, address resolver)
//     (getEnsAddress: `data` is addr(bytes32 node));
//   reverseWithGateways(bytes lookupAddress, uint256 coinType, string[] gateways) → (string name, address resolver, address reverseResolver)
//     (getEnsName: the name record of <hex address>.addr.reverse, checked against the name's addr record).
// The errors are the ones viem decodes and maps to null (ResolverNotFound, ReverseAddressMismatch, ...).
// Names marked off-chain revert OffchainLookup (EIP-3668) as a CCIP-Read resolver would. No wildcard
// resolution (ENSIP-10): each name's own resolver is used.
contract TestUniversalResolver {
    error ResolverNotFound(bytes name);
    error ResolverError(bytes errorData);
    error ReverseAddressMismatch(string primary, bytes primaryAddress);
    error UnsupportedResolverProfile(bytes4 selector);
    error OffchainLookup(address sender, string[] urls, bytes callData, bytes4 callbackFunction, bytes extraData);

    IEnsResolvers public immutable registry;
    address public immutable owner;
    bytes32 public immutable addrReverseNode;
    mapping(bytes32 => bool) public offchain;

    constructor(IEnsResolvers registry_) {
        registry = registry_;
        owner = msg.sender;
        addrReverseNode = keccak256(abi.encodePacked(keccak256(abi.encodePacked(bytes32(0), keccak256("reverse"))), keccak256("addr")));
    }

    function setOffchain(bytes32 node, bool value) external {
        require(msg.sender == owner, "TestUniversalResolver: not the owner");
        offchain[node] = value;
    }

    function resolveWithGateways(bytes calldata name, bytes calldata data, string[] calldata) external view returns (bytes memory, address) {
        bytes32 node = dnsNamehash(name, 0);
        if (offchain[node]) {
            string[] memory urls = new string[](1);
            urls[0] = "http://127.0.0.1:9/{sender}/{data}.json";
            revert OffchainLookup(address(this), urls, data, bytes4(0), "");
        }
        address resolver = registry.resolver(node);
        if (resolver == address(0)) revert ResolverNotFound(name);
        (bool ok, bytes memory result) = resolver.staticcall(data);
        if (!ok) revert ResolverError(result);
        return (result, resolver);
    }

    function reverseWithGateways(bytes calldata lookupAddress, uint256 coinType, string[] calldata) external view returns (string memory, address, address) {
        if (coinType != 60) revert UnsupportedResolverProfile(INameResolver.name.selector);
        bytes32 node = keccak256(abi.encodePacked(addrReverseNode, keccak256(hexLower(lookupAddress))));
        address reverseResolver = registry.resolver(node);
        if (reverseResolver == address(0)) return ("", address(0), address(0));
        string memory primary = INameResolver(reverseResolver).name(node);
        if (bytes(primary).length == 0) return ("", address(0), reverseResolver);
        bytes32 forward = namehash(bytes(primary));
        address resolver = registry.resolver(forward);
        address resolved = resolver == address(0) ? address(0) : IAddrResolver(resolver).addr(forward);
        if (keccak256(abi.encodePacked(resolved)) != keccak256(lookupAddress)) revert ReverseAddressMismatch(primary, abi.encodePacked(resolved));
        return (primary, resolver, reverseResolver);
    }

    /// namehash of a DNS-encoded name (length-prefixed labels, ending with a zero byte).
    function dnsNamehash(bytes calldata name, uint256 offset) internal pure returns (bytes32) {
        uint256 len = uint8(name[offset]);
        if (len == 0) return bytes32(0);
        bytes32 label = keccak256(name[offset + 1:offset + 1 + len]);
        return keccak256(abi.encodePacked(dnsNamehash(name, offset + 1 + len), label));
    }

    /// namehash of a dotted name: labels hashed from the right.
    function namehash(bytes memory name) internal pure returns (bytes32 node) {
        uint256 end = name.length;
        for (uint256 i = name.length; i > 0; i--) {
            if (name[i - 1] == ".") {
                node = keccak256(abi.encodePacked(node, keccakSlice(name, i, end)));
                end = i - 1;
            }
        }
        node = keccak256(abi.encodePacked(node, keccakSlice(name, 0, end)));
    }

    function keccakSlice(bytes memory b, uint256 start, uint256 end) internal pure returns (bytes32 h) {
        assembly {
            h := keccak256(add(add(b, 32), start), sub(end, start))
        }
    }

    function hexLower(bytes calldata b) internal pure returns (bytes memory out) {
        bytes16 digits = "0123456789abcdef";
        out = new bytes(b.length * 2);
        for (uint256 i = 0; i < b.length; i++) {
            out[2 * i] = digits[uint8(b[i]) >> 4];
            out[2 * i + 1] = digits[uint8(b[i]) & 0x0f];
        }
    }
}
