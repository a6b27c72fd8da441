/** A bad command line; each app's main prints the message on one line and exits 2. */
export class FlagError extends Error {
  override name = "FlagError";
}
