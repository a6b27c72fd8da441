// The conntrack commands ConntrackCLI runs and how it reads their results, on a scripted Exec.
// The answers are what conntrack v1.4.7 prints (stderr summary lines and exit codes).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  ConntrackCLI,
  conntrackDeleteArgs,
  conntrackExpireArgs,
  conntrackListArgs,
  deleteGroups,
} from "../../src/conntrack/conntrack.js";
import type { ConntrackFlow } from "../../src/conntrack/flow.js";
import { fakeExec } from "../apply/fake-exec.js";

const LINE =
  "udp      17 29 src=192.168.0.3 dst=172.30.0.53 sport=40053 dport=80 [UNREPLIED] src=10.180.0.1 dst=192.168.0.3 sport=80 dport=40053 mark=0 use=1\n";
const summary = (n: number, what: string) =>
  `conntrack v1.4.7 (conntrack-tools): ${n} flow entries have been ${what}.\n`;

const v4: ConntrackFlow = {
  protocol: "udp",
  orig: { src: "192.168.0.3", dst: "172.30.0.53", sport: 40053, dport: 80 },
  reply: { src: "10.180.0.1", dst: "192.168.0.3", sport: 80, dport: 40053 },
};
const v6: ConntrackFlow = {
  protocol: "udp",
  orig: { src: "fd00::3", dst: "fd00:30::53", sport: 40053, dport: 53 },
  reply: { src: "fd00:180::1", dst: "fd00::3", sport: 53, dport: 40053 },
};

describe("ConntrackCLI", () => {
  test("lists the family's UDP entries", async () => {
    assert.deepEqual(conntrackListArgs("IPv4"), ["-L", "-p", "udp"]);
    assert.deepEqual(conntrackListArgs("IPv6"), ["-f", "ipv6", "-L", "-p", "udp"]);
    const { exec, calls } = fakeExec(() => ({ stdout: LINE, stderr: summary(1, "shown") }));
    const flows = await new ConntrackCLI(exec).listUDP("IPv4");
    assert.deepEqual(flows, [{ ...v4, unreplied: true }]);
    assert.deepEqual(calls[0], { command: "conntrack", args: ["-L", "-p", "udp"], stdin: undefined });
  });

  test("an empty table is exit 0 and no entries; a failure throws with conntrack's message", async () => {
    const empty = fakeExec(() => ({ stderr: summary(0, "shown") }));
    assert.deepEqual(await new ConntrackCLI(empty.exec).listUDP("IPv6"), []);
    const failing = fakeExec(() => ({
      code: 1,
      stderr: "conntrack v1.4.7 (conntrack-tools): Operation failed: Operation not permitted\n",
    }));
    await assert.rejects(
      new ConntrackCLI(failing.exec).listUDP("IPv4"),
      /-L -p udp: .*Operation not permitted/,
    );
  });

  test("deletes the flows from a service address and port to one stale endpoint with one filter", () => {
    assert.deepEqual(conntrackDeleteArgs("IPv4", v4), [
      ...["-D", "-p", "udp", "--orig-dst", "172.30.0.53", "--dport", "80"],
      ...["--reply-src", "10.180.0.1", "--reply-port-src", "80"],
    ]);
    assert.deepEqual(conntrackDeleteArgs("IPv6", v6).slice(0, 5), ["-f", "ipv6", "-D", "-p", "udp"]);
    // Expiring: the same filter, answered entries only (conntrack's status filter matches entries with the bit set).
    assert.deepEqual(conntrackExpireArgs("IPv4", v4, 1), [
      ...["-U", "-p", "udp", "--orig-dst", "172.30.0.53", "--dport", "80"],
      ...["--reply-src", "10.180.0.1", "--reply-port-src", "80"],
      ...["--timeout", "1"],
    ]);
    // Two clients' flows to the same stale endpoint are one delete; another endpoint is another.
    const client = (sport: number): ConntrackFlow => ({ ...v4, orig: { ...v4.orig, sport } });
    const other: ConntrackFlow = { ...v4, reply: { ...v4.reply, src: "10.180.0.2" } };
    assert.deepEqual(deleteGroups([client(1), client(2), other]), [client(1), other]);
  });

  test("counts deletions; entries gone meanwhile are not an error, a refusal is", async () => {
    const { exec, calls } = fakeExec((c) => {
      const endpoint = c.args[c.args.indexOf("--reply-src") + 1];
      if (endpoint === "10.180.0.1") return { stderr: summary(2, "deleted") };
      // Expired between the listing and the delete: exit 1, nothing deleted.
      if (endpoint === "10.180.0.2") return { code: 1, stderr: summary(0, "deleted") };
      return { code: 1, stderr: "conntrack v1.4.7 (conntrack-tools): Operation failed: Permission denied\n" };
    });
    const to = (src: string, sport: number): ConntrackFlow => ({
      ...v4,
      orig: { ...v4.orig, sport },
      reply: { ...v4.reply, src },
    });
    const flows = [to("10.180.0.1", 1), to("10.180.0.1", 2), to("10.180.0.2", 3), to("10.180.0.3", 4)];
    const r = await new ConntrackCLI(exec).delete("IPv4", flows);
    assert.equal(calls.length, 3, "one delete per endpoint");
    assert.equal(r.deleted, 2);
    assert.equal(r.errors.length, 1);
    assert.match(r.errors[0]?.message ?? "", /--reply-src 10\.180\.0\.3 .*Permission denied/);
  });

  test("counts the entries conntrack updated when expiring", async () => {
    const { exec, calls } = fakeExec(() => ({ stderr: summary(3, "updated") }));
    const r = await new ConntrackCLI(exec).expire("IPv6", [v6], 1);
    assert.deepEqual(r, { deleted: 3, errors: [] });
    assert.deepEqual(calls[0]?.args.slice(0, 3), ["-f", "ipv6", "-U"]);
  });

  test("a missing conntrack binary is reported, not thrown", async () => {
    const { exec } = fakeExec(() => "missing");
    const r = await new ConntrackCLI(exec).delete("IPv4", [v4]);
    assert.equal(r.deleted, 0);
    assert.match(r.errors[0]?.message ?? "", /conntrack: command not found/);
    await assert.rejects(new ConntrackCLI(exec).listUDP("IPv4"), /command not found/);
  });
});
