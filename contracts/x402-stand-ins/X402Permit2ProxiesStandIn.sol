// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Permit2StandIn} from "./Permit2StandIn.sol";

interface IERC2612 {
    function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)
        external;
}

/// @title X402Permit2ProxyStandIn
/// @notice STAND-IN, NOT the deployed x402 Permit2 proxies. Written for x402-tally's tests from the
///         published interface of `x402BasePermit2Proxy` (x402 repository, contracts/evm/src; the
///         commit is in docs/x402-contracts.md) and the ABI that the npm package x402/evm 2.27.0
///         (scope x402) ships: the same
///         functions, structs, events and witness type strings, so the official x402 client and
///         facilitator code signs and submits to it unchanged. What the logs show is what the real
///         ones log: the token's Transfer (caused through Permit2), then `Settled()`; with
///         `settleWithPermit`, the token's EIP-2612 `Approval` first and `SettledWithPermit()` last.
///         No reentrancy guard.
abstract contract X402Permit2ProxyStandIn {
    /// The canonical Permit2 address; the tests put Permit2StandIn there.
    Permit2StandIn public constant PERMIT2 = Permit2StandIn(0x000000000022D473030F116dDEE9F6B43aC78BA3);

    struct EIP2612Permit {
        uint256 value;
        uint256 deadline;
        bytes32 r;
        bytes32 s;
        uint8 v;
    }

    event Settled();
    event SettledWithPermit();
    event EIP2612PermitFailedWithReason(address indexed token, address indexed owner, string reason);
    event EIP2612PermitFailedWithPanic(address indexed token, address indexed owner, uint256 errorCode);
    event EIP2612PermitFailedWithData(address indexed token, address indexed owner, bytes data);

    error InvalidPermit2Address();
    error InvalidDestination();
    error PaymentTooEarly();
    error InvalidOwner();
    error InvalidAmount();
    error Permit2612AmountMismatch();

    /// Moves `amount` from `owner` to `to` through Permit2, checked against the payer's signature.
    function pay(
        Permit2StandIn.PermitTransferFrom calldata permit,
        uint256 amount,
        address owner,
        address to,
        uint256 validAfter,
        bytes32 witnessHash,
        string memory witnessTypeString,
        bytes calldata signature
    ) internal {
        if (amount == 0) revert InvalidAmount();
        if (owner == address(0)) revert InvalidOwner();
        if (to == address(0)) revert InvalidDestination();
        if (block.timestamp < validAfter) revert PaymentTooEarly();
        PERMIT2.permitWitnessTransferFrom(
            permit,
            Permit2StandIn.SignatureTransferDetails({to: to, requestedAmount: amount}),
            owner,
            witnessHash,
            witnessTypeString,
            signature
        );
    }

    /// The payer's EIP-2612 permit letting Permit2 spend the token: the token logs `Approval`.
    /// A failing permit does not stop the payment (an allowance may already be there), as upstream.
    function approvePermit2(address token, address owner, EIP2612Permit calldata permit2612, uint256 permitted)
        internal
    {
        if (permit2612.value != permitted) revert Permit2612AmountMismatch();
        try IERC2612(token).permit(
            owner, address(PERMIT2), permit2612.value, permit2612.deadline, permit2612.v, permit2612.r, permit2612.s
        ) {} catch Error(string memory reason) {
            emit EIP2612PermitFailedWithReason(token, owner, reason);
        } catch Panic(uint256 errorCode) {
            emit EIP2612PermitFailedWithPanic(token, owner, errorCode);
        } catch (bytes memory data) {
            emit EIP2612PermitFailedWithData(token, owner, data);
        }
    }
}

/// @notice STAND-IN for `x402ExactPermit2Proxy` (canonical address 0x402085c2…e20001): pays the
///         permitted amount exactly.
contract X402ExactPermit2ProxyStandIn is X402Permit2ProxyStandIn {
    string public constant WITNESS_TYPE_STRING =
        "Witness witness)TokenPermissions(address token,uint256 amount)Witness(address to,uint256 validAfter)";
    bytes32 public constant WITNESS_TYPEHASH = keccak256("Witness(address to,uint256 validAfter)");

    struct Witness {
        address to;
        uint256 validAfter;
    }

    function settle(
        Permit2StandIn.PermitTransferFrom calldata permit,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) external {
        payExact(permit, owner, witness, signature);
        emit Settled();
    }

    function settleWithPermit(
        EIP2612Permit calldata permit2612,
        Permit2StandIn.PermitTransferFrom calldata permit,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) external {
        approvePermit2(permit.permitted.token, owner, permit2612, permit.permitted.amount);
        payExact(permit, owner, witness, signature);
        emit SettledWithPermit();
    }

    function payExact(
        Permit2StandIn.PermitTransferFrom calldata permit,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) private {
        bytes32 witnessHash = keccak256(abi.encode(WITNESS_TYPEHASH, witness.to, witness.validAfter));
        pay(
            permit,
            permit.permitted.amount,
            owner,
            witness.to,
            witness.validAfter,
            witnessHash,
            WITNESS_TYPE_STRING,
            signature
        );
    }
}

/// @notice STAND-IN for `x402UptoPermit2Proxy` (canonical address 0x4020a4f3…240002): the payer signs
///         a maximum, the facilitator named in the witness charges `amount` up to it.
contract X402UptoPermit2ProxyStandIn is X402Permit2ProxyStandIn {
    string public constant WITNESS_TYPE_STRING =
        "Witness witness)TokenPermissions(address token,uint256 amount)Witness(address to,address facilitator,uint256 validAfter)";
    bytes32 public constant WITNESS_TYPEHASH = keccak256("Witness(address to,address facilitator,uint256 validAfter)");

    struct Witness {
        address to;
        address facilitator;
        uint256 validAfter;
    }

    error UnauthorizedFacilitator();
    error AmountExceedsPermitted();

    function settle(
        Permit2StandIn.PermitTransferFrom calldata permit,
        uint256 amount,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) external {
        payUpto(permit, amount, owner, witness, signature);
        emit Settled();
    }

    function settleWithPermit(
        EIP2612Permit calldata permit2612,
        Permit2StandIn.PermitTransferFrom calldata permit,
        uint256 amount,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) external {
        if (amount > permit.permitted.amount) revert AmountExceedsPermitted();
        if (msg.sender != witness.facilitator) revert UnauthorizedFacilitator();
        approvePermit2(permit.permitted.token, owner, permit2612, permit.permitted.amount);
        payUpto(permit, amount, owner, witness, signature);
        emit SettledWithPermit();
    }

    function payUpto(
        Permit2StandIn.PermitTransferFrom calldata permit,
        uint256 amount,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) private {
        if (amount > permit.permitted.amount) revert AmountExceedsPermitted();
        if (msg.sender != witness.facilitator) revert UnauthorizedFacilitator();
        bytes32 witnessHash =
            keccak256(abi.encode(WITNESS_TYPEHASH, witness.to, witness.facilitator, witness.validAfter));
        pay(permit, amount, owner, witness.to, witness.validAfter, witnessHash, WITNESS_TYPE_STRING, signature);
    }
}
