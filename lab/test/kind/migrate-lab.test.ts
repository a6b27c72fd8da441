import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { echoImage, loadgenImage } from "../../src/agent/images.js";
import { kindWorkloadImages, netnsNodes } from "../../src/migrate/migrate-lab.js";
import { trafficObjects } from "../../src/migrate/workload.js";

describe("migrate on either runtime", () => {
  test("a netns node's commands run in its namespace, and every netns node runs pods", () => {
    const [n] = netnsNodes([
      {
        index: 1,
        name: "node-1",
        zone: "zone-a",
        netns: "sy-node-1",
        hostVeth: "sy-h1",
        ip: "198.18.0.2",
        ips: ["198.18.0.2"],
      },
    ]);
    assert.deepEqual(n, {
      name: "node-1",
      ip: "198.18.0.2",
      run: ["ip", "netns", "exec", "sy-node-1"],
      runsPods: true,
    });
  });

  test("the traffic: tagged images a kind node finds without a pull, every node's NodePort a target", () => {
    const objects = trafficObjects(2, [{ ip: "172.18.0.2" }, { ip: "172.18.0.3" }, { ip: "172.18.0.4" }]);
    const pods = objects.flatMap((o) => {
      const spec = (o.spec as { template?: { spec: { containers: Record<string, unknown>[] } } } | undefined)
        ?.template;
      return spec ? spec.spec.containers : [];
    });
    assert.deepEqual(
      pods.map((c) => [c.image, c.imagePullPolicy]),
      [
        [echoImage, "IfNotPresent"],
        [loadgenImage, "IfNotPresent"],
      ],
    );
    const deployment = objects.find((o) => o.kind === "Deployment");
    assert.equal((deployment?.spec as { replicas?: number } | undefined)?.replicas, 2);
    const args = ((pods[1]?.args as string[] | undefined) ?? []).join(" ");
    for (const ip of ["172.18.0.2", "172.18.0.3", "172.18.0.4"])
      assert.match(args, new RegExp(`--tcp ${ip}:30900`));
  });

  test("on kind, the echo and traffic images are built and loaded only where a node lacks them", async () => {
    const run = async (holders: Record<string, string[]>) => {
      const commands: string[] = [];
      const loads: string[] = [];
      const exec = async (argv: readonly string[]) => {
        commands.push(argv.join(" "));
        if (argv[1] === "ps") return "lab-control-plane\nlab-worker\n";
        if (argv[1] === "image") return argv.at(-1) === echoImage ? "sha256:e1\n" : "sha256:l1\n";
        const tags = holders[argv[2] ?? ""] ?? [];
        return JSON.stringify({
          images: tags.map((t) => ({
            id: t === echoImage ? "sha256:e1" : "sha256:l1",
            repoTags: [`docker.io/${t}`],
          })),
        });
      };
      const tools = { docker: "docker", kubectl: "kubectl" };
      const load = async (images: readonly string[], nodes: readonly string[]) => {
        loads.push(`${images.join(" ")} -> ${nodes.join(" ")}`);
      };
      const said = await kindWorkloadImages(exec, tools, "lab", "/repo", "/dev/null", load)();
      return { commands, loads, said };
    };
    const both = [echoImage, loadgenImage];
    const warm = await run({ "lab-control-plane": both, "lab-worker": both });
    assert.deepEqual(warm.loads, []);
    assert.ok(!warm.commands.some((c) => c.includes("images.mjs")), "nothing built");
    assert.equal(warm.said, `${echoImage}, ${loadgenImage}: on every node already`);
    const partly = await run({ "lab-control-plane": both, "lab-worker": [echoImage] });
    assert.deepEqual(partly.loads, [`${loadgenImage} -> lab-worker`]);
    assert.ok(!partly.commands.some((c) => c.includes("images.mjs")), "the engine has it: nothing built");
  });
});
