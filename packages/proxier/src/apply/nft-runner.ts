// Which nftables writer a proxy uses: the netlink writer (falling back to `nft` where netlink
// cannot be opened or a transaction holds what it does not translate), or the `nft` binary alone.
import type { ProxierLogger } from "../proxier/backend.js";
import type { Exec } from "./exec.js";
import { NetlinkNftApplier, type NftWriter } from "./netlink-applier.js";
import { NftApplier } from "./nft-applier.js";

/** The environment variable that picks the writer; unset means "auto". */
export const NFT_WRITER_ENV = "SWITCHYARD_PROXY_NFT_WRITER";

const WRITERS: readonly NftWriter[] = ["auto", "netlink", "nft"];

/** The writer named by SWITCHYARD_PROXY_NFT_WRITER; a one-line error for anything else. */
export function nftWriterFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): NftWriter {
  const value = env[NFT_WRITER_ENV] ?? "auto";
  if ((WRITERS as readonly string[]).includes(value)) return value as NftWriter;
  throw new Error(`${NFT_WRITER_ENV}=${JSON.stringify(value)}: want "auto" (default), "netlink" or "nft"`);
}

export interface NftRunnerOptions {
  readonly exec?: Exec;
  readonly writer?: NftWriter;
  readonly logger?: ProxierLogger;
}

/** The runner for one writer choice: NetlinkNftApplier ("auto", "netlink") or NftApplier ("nft"). */
export function newNftRunner(options: NftRunnerOptions = {}): NftApplier | NetlinkNftApplier {
  const exec = options.exec ? { exec: options.exec } : {};
  if (options.writer === "nft") return new NftApplier(exec);
  return new NetlinkNftApplier({
    ...exec,
    ...(options.writer === "netlink" ? { writer: "netlink" as const } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  });
}
