// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Permit2StandIn} from "./Permit2StandIn.sol";

interface IToken {
    function balanceOf(address account) external view returns (uint256);
    function transfer(address to, uint256 value) external returns (bool);
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external;
}

/// The call the batch contract makes into a deposit collector (x402 `IDepositCollector`).
interface IDepositCollector {
    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata collectorData)
        external;
}

/// @title X402BatchSettlementStandIn
/// @notice STAND-IN, NOT the deployed `x402BatchSettlement`. Written for x402-tally's tests from the
///         contract's published interface (x402 repository, contracts/evm/src/x402BatchSettlement.sol;
///         the commit is in docs/x402-contracts.md): the same `ChannelConfig` field order, EIP-712
///         domain ("x402 Batch Settlement", "1") and channel id, the same events and when they are
///         logged. It has `deposit`, `claim`, `settle` and `refund`; not `claimWithSignature`,
///         `refundWithSignature`, the timed withdrawal or `multicall`, and no EIP-1271 signatures.
///         What the logs show follows upstream:
///         - `ChannelCreated` on a deposit into a channel with no balance and no claim yet, so again
///           after a channel was refunded to zero before any claim;
///         - `Claimed(channelId, sender, …)` where `sender` is whoever submitted the claim (the
///           receiver or its authorizer), never the payer; a claim that does not raise the total
///           logs nothing (no zero `Claimed`);
///         - its own `Settled(receiver, token, sender, amount)` when claimed money is swept to the
///           receiver, unrelated to the Permit2 proxies' `Settled()`.
contract X402BatchSettlementStandIn {
    struct ChannelConfig {
        address payer;
        address payerAuthorizer;
        address receiver;
        address receiverAuthorizer;
        address token;
        uint40 withdrawDelay;
        bytes32 salt;
    }

    struct ChannelState {
        uint128 balance;
        uint128 totalClaimed;
    }

    struct ReceiverState {
        uint128 totalClaimed;
        uint128 totalSettled;
    }

    struct Voucher {
        ChannelConfig channel;
        uint128 maxClaimableAmount;
    }

    struct VoucherClaim {
        Voucher voucher;
        bytes signature;
        uint128 totalClaimed;
    }

    event ChannelCreated(bytes32 indexed channelId, ChannelConfig config);
    event ChannelClosed(bytes32 indexed channelId, ChannelConfig config);
    event Deposited(bytes32 indexed channelId, address indexed sender, uint128 amount, uint128 newBalance);
    event Claimed(bytes32 indexed channelId, address indexed sender, uint128 claimAmount, uint128 newTotalClaimed);
    event Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount);
    event Refunded(bytes32 indexed channelId, address indexed sender, uint128 amount);

    error InvalidChannel();
    error ZeroDeposit();
    error DepositOverflow();
    error InvalidSignature();
    error NotAuthorizedToClaim();
    error NotAuthorizedToRefund();
    error ClaimExceedsCeiling();
    error ClaimExceedsBalance();
    error WithdrawDelayOutOfRange();
    error EmptyBatch();
    error DepositCollectionFailed();
    error InvalidCollector();
    error ZeroRefund();
    error TransferFailed();

    uint40 public constant MIN_WITHDRAW_DELAY = 15 minutes;
    uint40 public constant MAX_WITHDRAW_DELAY = 30 days;

    bytes32 public constant CHANNEL_CONFIG_TYPEHASH = keccak256(
        "ChannelConfig(address payer,address payerAuthorizer,address receiver,address receiverAuthorizer,address token,uint40 withdrawDelay,bytes32 salt)"
    );
    bytes32 public constant VOUCHER_TYPEHASH = keccak256("Voucher(bytes32 channelId,uint128 maxClaimableAmount)");
    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");

    mapping(bytes32 channelId => ChannelState) public channels;
    mapping(bytes32 channelId => uint256) public refundNonce;
    mapping(address receiver => mapping(address token => ReceiverState)) public receivers;

    /// Escrows `amount` for the channel; `collector` pulls it from the payer into this contract.
    function deposit(ChannelConfig calldata config, uint128 amount, address collector, bytes calldata collectorData)
        external
    {
        if (config.payer == address(0) || config.receiver == address(0)) revert InvalidChannel();
        if (config.receiverAuthorizer == address(0) || config.token == address(0)) revert InvalidChannel();
        if (config.withdrawDelay < MIN_WITHDRAW_DELAY || config.withdrawDelay > MAX_WITHDRAW_DELAY) {
            revert WithdrawDelayOutOfRange();
        }
        if (amount == 0) revert ZeroDeposit();
        if (collector == address(0)) revert InvalidCollector();

        bytes32 channelId = getChannelId(config);
        ChannelState storage channel = channels[channelId];
        if (amount > type(uint128).max - channel.balance) revert DepositOverflow();
        channel.balance += amount;

        uint256 before = IToken(config.token).balanceOf(address(this));
        IDepositCollector(collector).collect(config.payer, config.token, amount, channelId, collectorData);
        if (IToken(config.token).balanceOf(address(this)) != before + amount) revert DepositCollectionFailed();

        // The channel held nothing and was never claimed from: (again) a new channel.
        if (channel.balance == amount && channel.totalClaimed == 0) emit ChannelCreated(channelId, config);
        emit Deposited(channelId, msg.sender, amount, channel.balance);
    }

    /// Records the receiver side's cumulative claims, each backed by the payer's voucher signature.
    function claim(VoucherClaim[] calldata voucherClaims) external {
        if (voucherClaims.length == 0) revert EmptyBatch();
        for (uint256 i = 0; i < voucherClaims.length; ++i) {
            ChannelConfig calldata config = voucherClaims[i].voucher.channel;
            if (msg.sender != config.receiver && msg.sender != config.receiverAuthorizer) {
                revert NotAuthorizedToClaim();
            }
            applyClaim(voucherClaims[i]);
        }
    }

    /// Pays the receiver everything claimed for it in `token` and not yet paid.
    function settle(address receiver, address token) external {
        ReceiverState storage state = receivers[receiver][token];
        uint128 amount = state.totalClaimed - state.totalSettled;
        if (amount == 0) return;
        state.totalSettled = state.totalClaimed;
        if (!IToken(token).transfer(receiver, amount)) revert TransferFailed();
        emit Settled(receiver, token, msg.sender, amount);
    }

    /// The receiver side returns up to `amount` of the unclaimed escrow to the payer.
    function refund(ChannelConfig calldata config, uint128 amount) external {
        if (msg.sender != config.receiver && msg.sender != config.receiverAuthorizer) revert NotAuthorizedToRefund();
        if (amount == 0) revert ZeroRefund();
        bytes32 channelId = getChannelId(config);
        refundNonce[channelId] += 1;

        ChannelState storage channel = channels[channelId];
        uint128 available = channel.balance - channel.totalClaimed;
        uint128 refunded = amount > available ? available : amount;
        if (refunded == 0) return;
        channel.balance -= refunded;

        emit Refunded(channelId, msg.sender, refunded);
        if (channel.balance == 0 && channel.totalClaimed == 0) emit ChannelClosed(channelId, config);
        if (!IToken(config.token).transfer(config.payer, refunded)) revert TransferFailed();
    }

    /// EIP-712 hash of the config under this contract's domain (chain id and address included).
    function getChannelId(ChannelConfig calldata config) public view returns (bytes32) {
        return typedDataHash(keccak256(abi.encode(CHANNEL_CONFIG_TYPEHASH, config)));
    }

    function getVoucherDigest(bytes32 channelId, uint128 maxClaimableAmount) public view returns (bytes32) {
        return typedDataHash(keccak256(abi.encode(VOUCHER_TYPEHASH, channelId, maxClaimableAmount)));
    }

    function domainSeparator() public view returns (bytes32) {
        return keccak256(
            abi.encode(
                DOMAIN_TYPEHASH, keccak256("x402 Batch Settlement"), keccak256("1"), block.chainid, address(this)
            )
        );
    }

    function typedDataHash(bytes32 structHash) private view returns (bytes32) {
        return keccak256(abi.encodePacked("\x19\x01", domainSeparator(), structHash));
    }

    function applyClaim(VoucherClaim calldata entry) private {
        ChannelConfig calldata config = entry.voucher.channel;
        bytes32 channelId = getChannelId(config);
        ChannelState storage channel = channels[channelId];

        // Cumulative totals: a voucher already applied (or an older one) changes nothing, logs nothing.
        if (entry.totalClaimed <= channel.totalClaimed) return;
        if (entry.totalClaimed > entry.voucher.maxClaimableAmount) revert ClaimExceedsCeiling();
        if (entry.totalClaimed > channel.balance) revert ClaimExceedsBalance();

        address signer = recoverSigner(getVoucherDigest(channelId, entry.voucher.maxClaimableAmount), entry.signature);
        address expected = config.payerAuthorizer != address(0) ? config.payerAuthorizer : config.payer;
        if (signer == address(0) || signer != expected) revert InvalidSignature();

        uint128 claimAmount = entry.totalClaimed - channel.totalClaimed;
        channel.totalClaimed = entry.totalClaimed;
        receivers[config.receiver][config.token].totalClaimed += claimAmount;
        emit Claimed(channelId, msg.sender, claimAmount, entry.totalClaimed);
    }

    function recoverSigner(bytes32 digest, bytes calldata signature) private pure returns (address) {
        if (signature.length != 65) return address(0);
        return ecrecover(digest, uint8(signature[64]), bytes32(signature[0:32]), bytes32(signature[32:64]));
    }
}

/// @notice STAND-IN for x402's `ERC3009DepositCollector` (canonical address 0x40208060…550004): pulls
///         the deposit from the payer with the token's EIP-3009 `receiveWithAuthorization` (nonce =
///         keccak256(abi.encode(channelId, salt))), then forwards it to the batch contract. The token
///         logs `AuthorizationUsed` and two Transfers (payer -> collector -> batch contract): a
///         payment to a contract, never to a seller.
contract X402Erc3009DepositCollectorStandIn is IDepositCollector {
    address public constant x402BatchSettlement = 0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003;

    error OnlyX402BatchSettlement();
    error TransferFailed();

    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata collectorData)
        external
    {
        if (msg.sender != x402BatchSettlement) revert OnlyX402BatchSettlement();
        (uint256 validAfter, uint256 validBefore, uint256 salt, bytes memory signature) =
            abi.decode(collectorData, (uint256, uint256, uint256, bytes));
        bytes32 nonce = keccak256(abi.encode(channelId, salt));
        IToken(token).receiveWithAuthorization(payer, address(this), amount, validAfter, validBefore, nonce, signature);
        if (!IToken(token).transfer(x402BatchSettlement, amount)) revert TransferFailed();
    }
}

/// @notice STAND-IN for x402's `Permit2DepositCollector` (canonical address 0x4020425f…7b0005): the
///         payer's Permit2 signature with a `DepositWitness(bytes32 channelId)` moves the deposit
///         straight to the batch contract. Without the optional EIP-2612 permit of the real one.
contract X402Permit2DepositCollectorStandIn is IDepositCollector {
    address public constant x402BatchSettlement = 0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003;
    Permit2StandIn public constant PERMIT2 = Permit2StandIn(0x000000000022D473030F116dDEE9F6B43aC78BA3);
    string public constant DEPOSIT_WITNESS_TYPE_STRING =
        "DepositWitness witness)DepositWitness(bytes32 channelId)TokenPermissions(address token,uint256 amount)";
    bytes32 public constant DEPOSIT_WITNESS_TYPEHASH = keccak256("DepositWitness(bytes32 channelId)");

    error OnlyX402BatchSettlement();

    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata collectorData)
        external
    {
        if (msg.sender != x402BatchSettlement) revert OnlyX402BatchSettlement();
        (uint256 nonce, uint256 deadline, bytes memory permit2Signature,) =
            abi.decode(collectorData, (uint256, uint256, bytes, bytes));
        PERMIT2.permitWitnessTransferFrom(
            Permit2StandIn.PermitTransferFrom({
                permitted: Permit2StandIn.TokenPermissions({token: token, amount: amount}),
                nonce: nonce,
                deadline: deadline
            }),
            Permit2StandIn.SignatureTransferDetails({to: x402BatchSettlement, requestedAmount: amount}),
            payer,
            keccak256(abi.encode(DEPOSIT_WITNESS_TYPEHASH, channelId)),
            DEPOSIT_WITNESS_TYPE_STRING,
            permit2Signature
        );
    }
}
