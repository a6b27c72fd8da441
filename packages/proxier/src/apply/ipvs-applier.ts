// Runs IPVS mode's programs against the kernel: `ipvsadm -R` for virtual servers,
// `ipset restore` for the sets, and `ip` for the kube-ipvs0 dummy device and its addresses.
// It also reads the IPVS table back (`ipvsadm -Ln`), since after a failed sync only the
// kernel knows what it holds. The iptables half goes through IptablesRestoreApplier.
import { existsSync } from "node:fs";
import type { IPVSTable } from "../ipvs/ipvsadm.js";
import { DUMMY_DEVICE } from "../ipvs/names.js";
import { parseIPVSList } from "../ipvs/parse-list.js";
import { type Exec, firstLine, realExec } from "./exec.js";

/** Where the kernel shows IPVS once the ip_vs module is loaded (in every network namespace). */
export const PROC_IP_VS = "/proc/net/ip_vs";

/** IPVS cannot be used on this node; the message is one line naming the missing module. */
export class IPVSUnavailableError extends Error {
  override name = "IPVSUnavailableError";
}

export class IPVSCommandError extends Error {
  readonly command: string;
  readonly exitCode: number;
  readonly stderr: string;
  constructor(command: string, exitCode: number, stderr: string) {
    super(`${command}: ${firstLine(stderr) || `exited with status ${exitCode}`}`);
    this.command = command;
    this.exitCode = exitCode;
    this.stderr = stderr;
  }
}

// ipvsadm's own words when the kernel lacks IPVS ("Can't initialize ipvs: Protocol not
// available" and "Are you sure that IP Virtual Server is built in the kernel or as module?").
const NO_IPVS_TEXT = /Can't initialize ipvs|IP Virtual Server is built in the kernel|Protocol not available/;

const MODULE_MISSING = `kernel module ip_vs is not loaded (${PROC_IP_VS} is missing); run "modprobe ip_vs" or use --proxy-mode=nftables`;

export interface IPVSApplierOptions {
  readonly exec?: Exec;
  /** Whether a path exists on the host; tests replace it to pretend IPVS is there. */
  readonly exists?: (path: string) => boolean;
}

/**
 * What a sync writes IPVS mode's kernel state with, one whole program per call: IPVSApplier runs
 * `ipvsadm -R` and `ipset restore -exist`; FakeIPVS and FakeIPSet apply the same input in memory.
 */
export interface IPVSRestorer {
  /** An ipvsadm-restore program (virtual and real servers). */
  restore(program: string): void | Promise<void>;
}
export interface IPSetRestorer {
  /** An `ipset restore` program; re-creating a set or re-adding a member is fine. */
  restoreIPSets(program: string): void | Promise<void>;
}

export class IPVSApplier implements IPVSRestorer, IPSetRestorer {
  readonly #exec: Exec;
  readonly #exists: (path: string) => boolean;

  constructor(options: IPVSApplierOptions = {}) {
    this.#exec = options.exec ?? realExec;
    this.#exists = options.exists ?? existsSync;
  }

  async #run(command: string, args: readonly string[], stdin?: string) {
    const r = await this.#exec(command, args, stdin === undefined ? {} : { stdin });
    if (r.code !== 0 && NO_IPVS_TEXT.test(r.stderr)) throw new IPVSUnavailableError(MODULE_MISSING);
    return r;
  }

  async #must(command: string, args: readonly string[], stdin?: string): Promise<string> {
    const r = await this.#run(command, args, stdin);
    if (r.code !== 0) throw new IPVSCommandError(command, r.code, r.stderr);
    return r.stdout;
  }

  /** Whether the kernel has IPVS; false means every ipvsadm call would fail. */
  kernelHasIPVS(): boolean {
    return this.#exists(PROC_IP_VS);
  }

  /**
   * Throws IPVSUnavailableError unless IPVS can be programmed: the module is loaded and
   * ipvsadm can talk to it. Modern kube-proxy refuses to start in ipvs mode otherwise.
   */
  async checkAvailable(): Promise<void> {
    if (!this.kernelHasIPVS()) throw new IPVSUnavailableError(MODULE_MISSING);
    await this.#must("ipvsadm", ["-Ln"]);
  }

  /**
   * Runs an ipvsadm-restore program with `ipvsadm -R`. Not the ipvsadm-restore script: it
   * runs `ipvsadm -C` first, which would turn every diff into an outage. Not atomic: a
   * failure leaves the lines before it applied, so the caller re-reads the table.
   */
  async restore(program: string): Promise<void> {
    if (program === "") return;
    await this.#must("ipvsadm", ["-R"], program);
  }

  /**
   * The kernel's table, and the real servers that still have connections (active or
   * inactive), named as realServerName() names them: the input of graceful termination.
   */
  async list(): Promise<{ table: IPVSTable; busy: Set<string> }> {
    return parseIPVSList(await this.#must("ipvsadm", ["-Ln"]));
  }

  /** Deletes every virtual server (`ipvsadm -C`). */
  async clear(): Promise<void> {
    await this.#must("ipvsadm", ["-C"]);
  }

  /** `ipvsadm --set tcp tcpfin udp` in seconds; 0 leaves a timeout as it is. */
  async setTimeouts(tcp: number, tcpFin: number, udp: number): Promise<void> {
    if (tcp === 0 && tcpFin === 0 && udp === 0) return;
    await this.#must("ipvsadm", ["--set", String(tcp), String(tcpFin), String(udp)]);
  }

  /** Applies an `ipset restore` program; -exist makes re-creating a set or re-adding a member fine. */
  async restoreIPSets(program: string): Promise<void> {
    await this.#must("ipset", ["restore", "-exist"], program);
  }

  /** Names of every ipset on the host. */
  async listIPSets(): Promise<string[]> {
    const out = await this.#must("ipset", ["list", "-n"]);
    return out.split("\n").filter((l) => l.trim() !== "");
  }

  async destroyIPSet(name: string): Promise<void> {
    const r = await this.#run("ipset", ["destroy", name]);
    if (r.code !== 0 && !/does not exist/.test(r.stderr))
      throw new IPVSCommandError("ipset", r.code, r.stderr);
  }

  /** Creates kube-ipvs0 unless it exists. Like upstream it stays down: local routes are all it needs. */
  async ensureDummy(): Promise<void> {
    const r = await this.#run("ip", ["link", "add", DUMMY_DEVICE, "type", "dummy"]);
    if (r.code !== 0 && /Unknown device type/.test(r.stderr)) {
      throw new IPVSUnavailableError(
        `kernel module dummy is not loaded, so ${DUMMY_DEVICE} cannot be created`,
      );
    }
    if (r.code !== 0 && !/File exists/.test(r.stderr)) throw new IPVSCommandError("ip", r.code, r.stderr);
  }

  /** Deletes kube-ipvs0 (and with it every address on it); absent is fine. */
  async deleteDummy(): Promise<void> {
    const r = await this.#run("ip", ["link", "del", DUMMY_DEVICE]);
    if (r.code !== 0 && !/Cannot find device|does not exist/.test(r.stderr)) {
      throw new IPVSCommandError("ip", r.code, r.stderr);
    }
  }

  /** Addresses on kube-ipvs0; none when it does not exist. */
  async boundAddresses(): Promise<string[]> {
    const r = await this.#run("ip", ["-o", "addr", "show", "dev", DUMMY_DEVICE]);
    if (r.code !== 0) {
      if (/does not exist|Cannot find device/.test(r.stderr)) return [];
      throw new IPVSCommandError("ip", r.code, r.stderr);
    }
    const out: string[] = [];
    for (const line of r.stdout.split("\n")) {
      const m = /\binet6? ([0-9a-fA-F.:]+)\//.exec(line);
      if (m?.[1]) out.push(m[1]);
    }
    return out;
  }

  async bind(address: string): Promise<void> {
    const r = await this.#run("ip", ["addr", "add", hostPrefix(address), "dev", DUMMY_DEVICE]);
    if (r.code !== 0 && !/File exists/.test(r.stderr)) throw new IPVSCommandError("ip", r.code, r.stderr);
  }

  async unbind(address: string): Promise<void> {
    const r = await this.#run("ip", ["addr", "del", hostPrefix(address), "dev", DUMMY_DEVICE]);
    if (r.code !== 0 && !/Cannot assign requested address/.test(r.stderr)) {
      throw new IPVSCommandError("ip", r.code, r.stderr);
    }
  }
}

function hostPrefix(address: string): string {
  return address.includes(":") ? `${address}/128` : `${address}/32`;
}
