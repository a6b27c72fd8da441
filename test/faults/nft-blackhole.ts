// Cuts loopback traffic to and from one TCP port with a real nftables table in the host namespace: the SYNs of new
// connections and every segment of established ones are dropped, not refused, so clients see silence.
import { connect } from "node:net";
import { sh } from "@switchyard/kube-proxy-app/testing";

export class NftBlackhole {
  readonly table = `sy_blackhole_${process.pid}`;
  #on = false;

  constructor(readonly port: number) {}

  /** Packets to the port dropped on their way in, packets from it on their way out: both halves of a connection. */
  on(): void {
    sh(
      ["nft", "-f", "-"],
      `table inet ${this.table} {
  chain in { type filter hook input priority -300; policy accept; iif "lo" tcp dport ${this.port} drop; }
  chain out { type filter hook output priority -300; policy accept; oif "lo" tcp sport ${this.port} drop; }
}
`,
    );
    this.#on = true;
  }

  /** Deletes the table; safe to call when it was never added. */
  off(): void {
    if (!this.#on) return;
    sh(["nft", "delete", "table", "inet", this.table]);
    this.#on = false;
  }
}

/** What a new TCP connection to 127.0.0.1:port meets within `ms`: an answer, a refusal, or silence. */
export function connectOutcome(port: number, ms: number): Promise<"connected" | "refused" | "silence"> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const end = (outcome: "connected" | "refused" | "silence") => {
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => end("silence"), ms);
    socket.once("connect", () => end("connected"));
    socket.once("error", () => end("refused"));
  });
}
