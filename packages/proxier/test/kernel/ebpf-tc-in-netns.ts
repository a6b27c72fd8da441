// Runs the tc loader inside a network namespace, for the tc kernel tests: tcx links name their device by index
// in the caller's namespace, so the loader must run in the node's. Started by ebpf-tc-fixture.ts under
// `nsenter --net` (which keeps this process's mounts, bpffs among them, unlike `ip netns exec`).
//
//   node --import tsx ebpf-tc-in-netns.ts load '<TcLoadOptions as JSON>'
//   node --import tsx ebpf-tc-in-netns.ts remove <pinRoot>
//   node --import tsx ebpf-tc-in-netns.ts prototype <object> <pinRoot> <device>=<program>...
// Prints the result as JSON on stdout.
import { mkdirSync } from "node:fs";
import { tcLinksDir } from "../../src/apply/bpf-loader.js";
import { loadTcPrograms, removeTcPrograms, type TcLoadOptions } from "../../src/apply/bpf-tc.js";
import { attachPrototype } from "./ebpf-tc-prototype.js";

const [command, argument, ...rest] = process.argv.slice(2);
try {
  if (command === "load")
    console.log(JSON.stringify(await loadTcPrograms(JSON.parse(argument ?? "{}") as TcLoadOptions)));
  else if (command === "remove") console.log(JSON.stringify(await removeTcPrograms(argument)));
  else if (command === "prototype") {
    const [pinRoot = "", ...pairs] = rest;
    mkdirSync(tcLinksDir(pinRoot), { recursive: true });
    const attachments = pairs.map((p) => ({ device: p.split("=")[0] ?? "", program: p.split("=")[1] ?? "" }));
    console.log(JSON.stringify(await attachPrototype(argument ?? "", pinRoot, attachments)));
  } else throw new Error(`unknown command ${command}`);
} catch (e) {
  console.error((e as Error).message);
  process.exit(1);
}
