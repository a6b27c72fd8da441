import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { addressTypesForService } from "../src/index.js";
import { deepFreeze, makeService } from "./fixtures.js";

describe("addressTypesForService", () => {
  const cases = [
    { name: "ipFamilies IPv4", service: makeService({ ipFamilies: ["IPv4"] }), want: ["IPv4"] },
    {
      name: "ipFamilies dual",
      service: makeService({ ipFamilies: ["IPv6", "IPv4"] }),
      want: ["IPv6", "IPv4"],
    },
    {
      name: "no families, IPv4 ClusterIP",
      service: makeService({ clusterIP: "172.30.0.1" }),
      want: ["IPv4"],
    },
    { name: "no families, IPv6 ClusterIP", service: makeService({ clusterIP: "fd00::1" }), want: ["IPv6"] },
    { name: "no families, headless", service: makeService({ clusterIP: "None" }), want: ["IPv4", "IPv6"] },
    { name: "no families, no ClusterIP", service: makeService({ clusterIP: "" }), want: ["IPv4", "IPv6"] },
  ];
  for (const c of cases) {
    test(c.name, () => assert.deepEqual([...addressTypesForService(deepFreeze(c.service))], c.want));
  }
});
