// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @title Permit2StandIn
/// @notice STAND-IN, NOT Uniswap's Permit2. It implements only the SignatureTransfer calls the x402
///         proxies and the Permit2 deposit collector make (`permitTransferFrom`,
///         `permitWitnessTransferFrom`), from Permit2's published interface (ISignatureTransfer): the
///         same function signatures, EIP-712 domain ("Permit2", chainId, verifyingContract), type
///         strings, unordered nonces and checks, so an account's 65-byte Permit2 signature is accepted
///         here when it would be there. Written for x402-tally's tests; no AllowanceTransfer part, no
///         EIP-1271 (smart-wallet) or 64-byte compact signatures. Tests place it at
///         0x000000000022d473030f116ddee9f6b43ac78ba3.
contract Permit2StandIn {
    struct TokenPermissions {
        address token;
        uint256 amount;
    }

    struct PermitTransferFrom {
        TokenPermissions permitted;
        uint256 nonce;
        uint256 deadline;
    }

    struct SignatureTransferDetails {
        address to;
        uint256 requestedAmount;
    }

    event UnorderedNonceInvalidation(address indexed owner, uint256 word, uint256 mask);

    error SignatureExpired(uint256 signatureDeadline);
    error InvalidAmount(uint256 maxAmount);
    error InvalidNonce();
    error InvalidSigner();
    error InvalidSignatureLength();
    error TransferFailed();

    bytes32 private constant DOMAIN_TYPEHASH = keccak256("EIP712Domain(string name,uint256 chainId,address verifyingContract)");
    bytes32 private constant NAME_HASH = keccak256("Permit2");
    bytes32 private constant TOKEN_PERMISSIONS_TYPEHASH = keccak256("TokenPermissions(address token,uint256 amount)");
    bytes32 private constant PERMIT_TRANSFER_FROM_TYPEHASH = keccak256(
        "PermitTransferFrom(TokenPermissions permitted,address spender,uint256 nonce,uint256 deadline)TokenPermissions(address token,uint256 amount)"
    );
    /// The witness variant's type string is this prefix followed by the caller's `witnessTypeString`.
    string private constant WITNESS_TYPE_PREFIX =
        "PermitWitnessTransferFrom(TokenPermissions permitted,address spender,uint256 nonce,uint256 deadline,";

    /// owner => word position => bitmap of used nonces (nonce = word position * 256 + bit position).
    mapping(address => mapping(uint256 => uint256)) public nonceBitmap;

    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return keccak256(abi.encode(DOMAIN_TYPEHASH, NAME_HASH, block.chainid, address(this)));
    }

    function permitTransferFrom(
        PermitTransferFrom calldata permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes calldata signature
    ) external {
        bytes32 structHash = keccak256(
            abi.encode(PERMIT_TRANSFER_FROM_TYPEHASH, permissionsHash(permit.permitted), msg.sender, permit.nonce, permit.deadline)
        );
        transferWithSignature(permit, transferDetails, owner, structHash, signature);
    }

    function permitWitnessTransferFrom(
        PermitTransferFrom calldata permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes32 witness,
        string calldata witnessTypeString,
        bytes calldata signature
    ) external {
        bytes32 typeHash = keccak256(abi.encodePacked(WITNESS_TYPE_PREFIX, witnessTypeString));
        bytes32 structHash = keccak256(
            abi.encode(typeHash, permissionsHash(permit.permitted), msg.sender, permit.nonce, permit.deadline, witness)
        );
        transferWithSignature(permit, transferDetails, owner, structHash, signature);
    }

    /// Marks the nonces set in `mask` of word `wordPos` as used for the caller.
    function invalidateUnorderedNonces(uint256 wordPos, uint256 mask) external {
        nonceBitmap[msg.sender][wordPos] |= mask;
        emit UnorderedNonceInvalidation(msg.sender, wordPos, mask);
    }

    function permissionsHash(TokenPermissions calldata permitted) private pure returns (bytes32) {
        return keccak256(abi.encode(TOKEN_PERMISSIONS_TYPEHASH, permitted.token, permitted.amount));
    }

    function transferWithSignature(
        PermitTransferFrom calldata permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes32 structHash,
        bytes calldata signature
    ) private {
        if (block.timestamp > permit.deadline) revert SignatureExpired(permit.deadline);
        if (transferDetails.requestedAmount > permit.permitted.amount) revert InvalidAmount(permit.permitted.amount);
        useNonce(owner, permit.nonce);

        bytes32 digest = keccak256(abi.encodePacked("\x19\x01", DOMAIN_SEPARATOR(), structHash));
        address signer = recoverSigner(digest, signature);
        if (signer == address(0) || signer != owner) revert InvalidSigner();

        // The token's own transferFrom: its Transfer log is the payment the proxies' logs point at.
        (bool ok, bytes memory returned) = permit.permitted.token.call(
            abi.encodeWithSignature(
                "transferFrom(address,address,uint256)", owner, transferDetails.to, transferDetails.requestedAmount
            )
        );
        if (!ok || (returned.length > 0 && !abi.decode(returned, (bool)))) revert TransferFailed();
    }

    function useNonce(address owner, uint256 nonce) private {
        uint256 wordPos = nonce >> 8;
        uint256 bit = 1 << (nonce & 0xff);
        uint256 word = nonceBitmap[owner][wordPos];
        if (word & bit != 0) revert InvalidNonce();
        nonceBitmap[owner][wordPos] = word | bit;
    }

    /// ecrecover of a 65-byte (r, s, v) signature; address(0) when it does not recover.
    function recoverSigner(bytes32 digest, bytes calldata signature) private pure returns (address) {
        if (signature.length != 65) revert InvalidSignatureLength();
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        return ecrecover(digest, v, r, s);
    }
}
