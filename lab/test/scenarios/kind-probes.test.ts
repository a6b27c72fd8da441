// The pieces that let scenarios run on a kind lab (no Node, no dig in its nodes), tested without a cluster: the
// shell lines run for real in bash here, against real sockets on loopback.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createSocket } from "node:dgram";
import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { describe, test } from "node:test";
import { promisify } from "node:util";
import type { Pod } from "kubernetes-types/core/v1.js";
import { aQuery, replyError } from "../../src/agent/dns-lookup.js";
import { answerLoop, countAnswerLines } from "../../src/scenarios/hints/node-client.js";
import { kindContainerRun, kindPodRun, kindSandboxImage } from "../../src/scenarios/kit/pod-run.js";
import { fromHexDump, udpQueryLine } from "../../src/scenarios/kit/probes.js";

const bash = async (line: string) => (await promisify(execFile)("bash", ["-c", line])).stdout;

describe("answerLoop (a kind node's connection counter)", () => {
  test("counts which server answered each connection, and connections nobody answered", async () => {
    let n = 0;
    const server = createServer((s) => s.end(`${n++ % 2 ? "pod-b" : "pod-a"} 127.0.0.1:1\n`));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    try {
      assert.deepEqual(countAnswerLines(await bash(answerLoop(`127.0.0.1:${port}`, 6))), {
        answers: { "pod-a": 3, "pod-b": 3 },
        failures: 0,
      });
    } finally {
      server.close();
    }
    // Nothing listens there any more: every connection is refused and counted as failed.
    assert.deepEqual(countAnswerLines(await bash(answerLoop(`127.0.0.1:${port}`, 2))), {
      answers: {},
      failures: 2,
    });
  });

  test("refuses a target that is not IP:PORT (it goes into a shell line)", () => {
    assert.throws(() => answerLoop("1.2.3.4:80; rm -rf /", 1), /bad target/);
  });
});

describe("udpQueryLine (a DNS query with bash and coreutils only)", () => {
  test("sends the whole query in one datagram and prints the reply", async () => {
    const got: Buffer[] = [];
    const s = createSocket("udp4");
    s.on("message", (q, peer) => {
      got.push(q);
      const reply = Buffer.from(q);
      reply[2] = 0x81;
      reply[3] = 0x80;
      reply.writeUInt16BE(1, 6);
      const rr = Buffer.from([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 5, 0, 4, 10, 0, 0, 1]);
      s.send(Buffer.concat([reply, rr]), peer.port, peer.address);
    });
    await new Promise<void>((r) => s.bind(53, "127.83.0.53", () => r())).catch(() => undefined);
    const bound = s.address() as AddressInfo | undefined;
    try {
      assert.ok(bound, "a test DNS server on 127.83.0.53:53 (the line always targets port 53)");
      const query = aQuery("kubernetes.default.svc.cluster.local.", 0x1234);
      const reply = fromHexDump(await bash(udpQueryLine("127.83.0.53", query)));
      assert.deepEqual(got, [query], "one datagram, the query byte for byte (NUL bytes included)");
      assert.equal(replyError(reply, 0x1234), undefined);
    } finally {
      s.close();
    }
  });

  test("prints nothing when no server answers, which counts as no answer", async () => {
    const reply = fromHexDump(await bash(udpQueryLine("127.83.0.54", aQuery("x.", 7))).catch(() => ""));
    assert.equal(replyError(reply, 7), "not ours");
  });

  test("refuses a server that is not an IPv4 address", () => {
    assert.throws(() => udpQueryLine("10.0.0.1/53; id", aQuery("x.", 1)), /bad DNS server/);
  });
});

describe("kind pods and images, through a fake docker", () => {
  const pod = { metadata: { name: "p", uid: "abc-123" }, spec: { nodeName: "sy-worker" } } as Pod;

  test("a pod is entered with nsenter on its sandbox's pid, inside its node", async () => {
    const calls: string[][] = [];
    const run = await kindPodRun(
      async (argv) => {
        calls.push([...argv]);
        return "4242\n";
      },
      "docker",
      pod,
    );
    assert.deepEqual(run, ["docker", "exec", "sy-worker", "nsenter", "-t", "4242", "-n"]);
    assert.deepEqual(calls[0]?.slice(0, 4), ["docker", "exec", "sy-worker", "sh"]);
    assert.match(calls[0]?.[5] ?? "", /io\.kubernetes\.pod\.uid=abc-123/);
  });

  test("a pod without a running sandbox is a one-line error naming it and its node", async () => {
    await assert.rejects(
      kindPodRun(async () => "", "docker", pod),
      /^Error: pod p has no running sandbox on sy-worker/,
    );
  });

  test("a container is entered with crictl exec on its running container, inside its node", async () => {
    const calls: string[][] = [];
    const fake = async (argv: readonly string[]) => {
      calls.push([...argv]);
      return "f00d\n";
    };
    assert.deepEqual(await kindContainerRun(fake, "docker", pod, "c"), [
      ...["docker", "exec", "sy-worker", "crictl", "exec", "f00d"],
    ]);
    assert.deepEqual(calls[0], [
      ...["docker", "exec", "sy-worker", "crictl", "ps", "-q", "--state", "running"],
      ...["--label", "io.kubernetes.pod.uid=abc-123", "--name", "^c$"],
    ]);
    await assert.rejects(
      kindContainerRun(async () => "", "docker", pod, "c"),
      /^Error: pod p has no running container c on sy-worker/,
    );
  });

  test("the pause image is the one the node holds", async () => {
    const images = JSON.stringify({
      images: [
        { repoTags: ["registry.k8s.io/etcd:3.6.16-0"] },
        { repoTags: ["registry.k8s.io/pause:3.10.2"] },
      ],
    });
    assert.equal(
      await kindSandboxImage(async () => images, ["docker", "exec", "n"]),
      "registry.k8s.io/pause:3.10.2",
    );
    await assert.rejects(
      kindSandboxImage(async () => "{}", ["docker", "exec", "n"]),
      /no pause image/,
    );
  });
});
