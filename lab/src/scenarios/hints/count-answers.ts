/**
 * The scenarios' client: opens connections one after another (a few in flight) to host:port, where the lab's echo
 * server answers one line starting with its pod's name, and prints how many connections each pod answered as JSON.
 * Every connection is new, so the node's proxy rules pick an endpoint for each. Runs inside a node's namespace.
 * Usage: count-answers --target IP:PORT --connections N [--concurrency C]
 */
import { connect } from "node:net";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    target: { type: "string" },
    connections: { type: "string", default: "200" },
    concurrency: { type: "string", default: "8" },
  },
});
const [host = "", port = "0"] = (values.target ?? "").split(":");
if (!host) throw new Error("count-answers: --target IP:PORT is required");
const total = Number(values.connections);

function once(): Promise<string | undefined> {
  return new Promise((resolve) => {
    let text = "";
    const s = connect({ host, port: Number(port), timeout: 2000 });
    s.setEncoding("utf8");
    s.on("data", (d: string) => {
      text += d;
    });
    s.on("end", () => resolve(text.split(" ")[0] || undefined));
    s.on("timeout", () => {
      s.destroy();
      resolve(undefined);
    });
    s.on("error", () => resolve(undefined));
  });
}

const answers: Record<string, number> = {};
let failures = 0;
let started = 0;
const worker = async () => {
  while (started < total) {
    started++;
    const pod = await once();
    if (pod) answers[pod] = (answers[pod] ?? 0) + 1;
    else failures++;
  }
};
await Promise.all(Array.from({ length: Number(values.concurrency) }, worker));
process.stdout.write(`${JSON.stringify({ answers, failures })}\n`);
