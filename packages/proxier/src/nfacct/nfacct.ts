// The kernel's extended accounting objects (nfnetlink_acct), which count the packets of the iptables rules that
// name them with `-m nfacct --nfacct-name NAME`. kube-proxy v1.37.2 keeps two (pkg/proxy/util/nfacct) and talks
// netlink to them; this runs the nfacct CLI through the injected Exec instead, which asks the kernel the same
// questions (get one object, create one) and so gives the same counts. The objects live in the network namespace.
import { CommandNotFoundError, type Exec, firstLine, realExec } from "../apply/exec.js";

/** The kernel's limit on an object's name (NFACCT_NAME_MAX, 32 with the terminating NUL). */
export const NFACCT_NAME_MAX = 31;

/** One accounting object as the kernel reports it. */
export interface NfacctCounter {
  readonly name: string;
  readonly packets: number;
  readonly bytes: number;
}

/** What the proxy needs of nfacct: create a counter when missing, and read one. */
export interface Nfacct {
  /** Creates the object unless it exists; throws when the kernel refuses. */
  ensure(name: string): Promise<void>;
  /** The object's counts; throws NfacctNotFoundError when there is none of that name. */
  get(name: string): Promise<NfacctCounter>;
}

export class NfacctError extends Error {
  override name = "NfacctError";
}

/** No object of that name (the kernel's ENOENT). */
export class NfacctNotFoundError extends NfacctError {
  override name = "NfacctNotFoundError";
}

/** The CLI's line for ENOENT: "nfacct v1.0.2: error: No such file or directory". */
const NOT_FOUND = /No such file or directory/;

/** `{ pkts = 00000000000000000003, bytes = 00000000000000000180 } = name;` */
const OBJECT = /^\{ pkts = (\d+), bytes = (\d+) \} = (.+);$/;

/** One line of `nfacct get` or `nfacct list` output; undefined when it is not one. */
export function parseNfacctObject(line: string): NfacctCounter | undefined {
  const m = OBJECT.exec(line.trim());
  if (!m?.[1] || !m[2] || !m[3]) return undefined;
  return { name: m[3], packets: Number(m[1]), bytes: Number(m[2]) };
}

export class NfacctCLI implements Nfacct {
  readonly #exec: Exec;

  constructor(exec: Exec = realExec) {
    this.#exec = exec;
  }

  /**
   * An NfacctCLI once the kernel has shown it answers, as upstream's nfacct.New(): getting an object that may not
   * exist must succeed or say there is none. Throws "nfacct sub-system not available" otherwise (no nfacct CLI,
   * or a kernel without nfnetlink_acct).
   */
  static async open(exec: Exec = realExec): Promise<NfacctCLI> {
    const cli = new NfacctCLI(exec);
    try {
      await cli.get("IMayExist");
    } catch (err) {
      if (!(err instanceof NfacctNotFoundError)) {
        throw new NfacctError(`nfacct sub-system not available: ${(err as Error).message}`);
      }
    }
    return cli;
  }

  async get(name: string): Promise<NfacctCounter> {
    checkName(name);
    const r = await this.#run(["get", name]);
    if (r.code !== 0) throw failure(`get ${name}`, r.stderr);
    const counter = r.stdout
      .split("\n")
      .map(parseNfacctObject)
      .find((c) => c?.name === name);
    if (counter === undefined) throw new NfacctError(`nfacct get ${name}: unexpected output ${r.stdout}`);
    return counter;
  }

  /** As upstream's Ensure: get, and add only when there is none. */
  async ensure(name: string): Promise<void> {
    try {
      await this.get(name);
    } catch (err) {
      if (!(err instanceof NfacctNotFoundError)) throw err;
      const r = await this.#run(["add", name]);
      if (r.code !== 0) throw failure(`add ${name}`, r.stderr);
    }
  }

  async #run(args: string[]) {
    try {
      return await this.#exec("nfacct", args);
    } catch (err) {
      if (err instanceof CommandNotFoundError) throw new NfacctError(err.message);
      throw err;
    }
  }
}

function checkName(name: string): void {
  if (name === "") throw new NfacctError("object name cannot be empty");
  if (name.length > NFACCT_NAME_MAX) {
    throw new NfacctError(`object name exceeds the maximum allowed length of ${NFACCT_NAME_MAX} characters`);
  }
}

function failure(what: string, stderr: string): NfacctError {
  const line = firstLine(stderr);
  const message = `nfacct ${what}: ${line}`;
  return NOT_FOUND.test(line) ? new NfacctNotFoundError(message) : new NfacctError(message);
}
