// Runs the tc loader inside a network namespace, for the tc kernel tests: tcx links name their device by index
// in the caller's namespace, so the loader must run in the node's. Started by ebpf-tc-fixture.ts under
// `nsenter --net` (which keeps this process's mounts, bpffs among them, unlike `ip netns exec`).
//
//   node --import tsx ebpf-tc-in-netns.ts load '<TcLoadOptions as JSON>'
//   node --import tsx ebpf-tc-in-netns.ts remove <pinRoot>
// Prints the result as JSON on stdout.
import { loadTcPrograms, removeTcPrograms, type TcLoadOptions } from "../../src/apply/bpf-tc.js";

const [command, argument] = process.argv.slice(2);
try {
  if (command === "load")
    console.log(JSON.stringify(await loadTcPrograms(JSON.parse(argument ?? "{}") as TcLoadOptions)));
  else if (command === "remove") console.log(JSON.stringify(await removeTcPrograms(argument)));
  else throw new Error(`unknown command ${command}`);
} catch (e) {
  console.error((e as Error).message);
  process.exit(1);
}
