// The error every nftables runner throws: NftApplier (from nft's stderr) and FakeNFTables alike, so
// callers classify failures with isNotFound/isAlreadyExists, never by matching message text.

export type NFTErrorKind = "not-found" | "exists" | "busy" | "invalid";

export class NFTError extends Error {
  readonly kind: NFTErrorKind;
  constructor(kind: NFTErrorKind, message: string) {
    super(`nftables: ${message}`);
    this.kind = kind;
  }
}

export const isNotFound = (e: unknown): boolean => e instanceof NFTError && e.kind === "not-found";
export const isAlreadyExists = (e: unknown): boolean => e instanceof NFTError && e.kind === "exists";
