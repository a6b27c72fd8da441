// The test network's guard: a host /30 that a link left by an interrupted run still routes is refused at once,
// naming the route, instead of building a node whose API forwarder cannot be reached.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { describe, test } from "node:test";
import { missingKernelTools, Net } from "../src/testing/index.js";

const skip = missingKernelTools(["ip"]);
const SUBNET = 251;
const LINK = `sytn${process.pid % 10000}`;

describe("the test network", { skip }, () => {
  test("refuses a host network another link still routes, and builds nothing", async () => {
    execFileSync("ip", ["link", "add", LINK, "type", "veth", "peer", "name", `${LINK}p`]);
    try {
      execFileSync("ip", ["addr", "add", `169.254.${SUBNET}.1/30`, "dev", LINK]);
      // Up, as a leftover link is: a down link's address puts no route in the table.
      execFileSync("ip", ["link", "set", LINK, "up"]);
      const net = new Net(`sytn${process.pid % 10000}`, SUBNET);
      await assert.rejects(
        net.build([]),
        new RegExp(`169\\.254\\.${SUBNET}\\.0/30 is routed already \\(.*dev ${LINK}`),
      );
      const namespaces = execFileSync("ip", ["netns", "list"], { encoding: "utf8" });
      assert.ok(!namespaces.includes(net.node), `${net.node} was made`);
    } finally {
      execFileSync("ip", ["link", "del", LINK]);
    }
  });
});
