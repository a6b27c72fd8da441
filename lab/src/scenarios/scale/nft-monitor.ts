import { type ChildProcess, spawn } from "node:child_process";
import type { Exec } from "../../exec.js";

/**
 * `nft monitor` in a node's namespace: every change the kernel's nf_tables commits there, one line each, as
 * nft prints them. It sees nftables mode's transactions and iptables-nft's restores alike, so both modes'
 * writes are counted the same way. A huge transaction can overflow the monitor's socket ("No buffer space"):
 * then `lost` is set and the count is a lower bound. nft's stdout is a pipe here, so it runs line-buffered
 * (stdbuf -oL); block-buffered, a handful of lines would sit in its buffer until it exits.
 */
export class NftMonitor {
  private readonly lines: string[] = [];
  private stderr = "";
  private readonly child: ChildProcess;
  private buffered = "";

  constructor(private readonly at: readonly string[]) {
    const [program = "", ...args] = [...at, "stdbuf", "-oL", "nft", "monitor"];
    this.child = spawn(program, args, {
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child.stdout?.setEncoding("utf8").on("data", (c: string) => {
      const parts = (this.buffered + c).split("\n");
      this.buffered = parts.pop() ?? "";
      this.lines.push(...parts);
    });
    this.child.stderr?.setEncoding("utf8").on("data", (c: string) => {
      this.stderr += c;
    });
  }

  /**
   * Waits until the monitor is subscribed: it writes a scratch table into the namespace and waits to see it
   * (a busy machine can take seconds to start `nft monitor`, and changes before that are not seen).
   */
  async ready(exec: Exec, timeoutMs = 10_000): Promise<void> {
    const probe = "switchyard-monitor-probe";
    const deadline = Date.now() + timeoutMs;
    while (!this.lines.some((l) => l.includes(probe))) {
      if (Date.now() > deadline) throw new Error("nft monitor never started");
      await exec([...this.at, "nft", "add", "table", "ip", probe]);
      await exec([...this.at, "nft", "delete", "table", "ip", probe]);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async stop(): Promise<{ lines: string[]; lost: boolean }> {
    await new Promise((r) => setTimeout(r, 200));
    this.child.kill("SIGTERM");
    return { lines: [...this.lines], lost: /buffer space|overrun/i.test(this.stderr) };
  }
}

/** Changes to the proxy's tables among monitor lines: kube-proxy's (nftables) or iptables-nft's nat/filter. */
export function proxyWrites(lines: readonly string[]): { lines: number; bytes: number } {
  const ours = lines.filter((l) =>
    /^(add|delete|insert|replace|flush|destroy) \S+ ip6? (kube-proxy|nat|filter|mangle)\b/.test(l),
  );
  return { lines: ours.length, bytes: ours.reduce((s, l) => s + Buffer.byteLength(l) + 1, 0) };
}
