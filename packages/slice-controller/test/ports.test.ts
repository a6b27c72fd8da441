import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { ServicePort } from "kubernetes-types/core/v1.js";
import { endpointPortsFor, findPort, portMapKey } from "../src/index.js";
import { deepFreeze, makePod, makeService } from "./fixtures.js";
import { run } from "./reconcile-helpers.js";

const namedHttp: ServicePort = { name: "http", port: 80, targetPort: "web", protocol: "TCP" };
const app = (port: number, protocol = "TCP") => ({
  name: "app",
  ports: [{ name: "web", containerPort: port, protocol }],
});

describe("findPort", () => {
  const cases = [
    {
      name: "numeric targetPort is used as is",
      pod: makePod(0),
      port: { port: 80, targetPort: 9090 },
      want: 9090,
    },
    {
      name: "named port in a container",
      pod: makePod(0, { containers: [app(8081)] }),
      port: namedHttp,
      want: 8081,
    },
    {
      name: "named port with another protocol does not match",
      pod: makePod(0, { containers: [app(8081, "UDP")] }),
      port: namedHttp,
      want: undefined,
    },
    {
      name: "named port in a sidecar (restartPolicy Always)",
      pod: makePod(0, { initContainers: [{ ...app(8082), restartPolicy: "Always" }] }),
      port: namedHttp,
      want: 8082,
    },
    {
      name: "named port in a plain init container is ignored",
      pod: makePod(0, { initContainers: [app(8082)] }),
      port: namedHttp,
      want: undefined,
    },
    {
      name: "containers win over sidecars",
      pod: makePod(0, {
        containers: [app(8081)],
        initContainers: [{ ...app(8082), restartPolicy: "Always" }],
      }),
      port: namedHttp,
      want: 8081,
    },
  ];
  for (const c of cases) {
    test(c.name, () => assert.equal(findPort(deepFreeze(c.pod), deepFreeze(c.port)), c.want));
  }
});

describe("slice ports", () => {
  test("carry name, resolved port, protocol and appProtocol", () => {
    const service = makeService({
      ports: [
        { name: "http", port: 80, targetPort: 8080, protocol: "TCP", appProtocol: "http" },
        { name: "dns", port: 53, targetPort: 5353, protocol: "UDP" },
      ],
    });
    assert.deepEqual(endpointPortsFor(deepFreeze(service), deepFreeze(makePod(0))), [
      { name: "http", port: 8080, protocol: "TCP", appProtocol: "http" },
      { name: "dns", port: 5353, protocol: "UDP" },
    ]);
  });

  test("port-map key ignores order", () => {
    const a = { name: "a", port: 1, protocol: "TCP" };
    const b = { name: "b", port: 2, protocol: "TCP" };
    assert.equal(portMapKey([a, b]), portMapKey([b, a]));
    assert.notEqual(portMapKey([a]), portMapKey([b]));
    assert.equal(portMapKey(undefined), portMapKey([]));
  });

  test("pods resolving a named port differently land in separate slices", () => {
    const service = makeService({ ports: [namedHttp] });
    const pods = [
      makePod(0, { containers: [app(8080)] }),
      makePod(1, { containers: [app(9090)] }),
      makePod(2, { containers: [app(8080)] }),
    ];
    const plan = run({ service, pods });
    assert.deepEqual(
      plan.toCreate.map((s) => [s.ports?.[0]?.port, s.endpoints.map((e) => e.targetRef?.name)]),
      [
        [8080, ["pod-0", "pod-2"]],
        [9090, ["pod-1"]],
      ],
    );
  });

  test("a pod that cannot resolve the named port is published in a slice without that port", () => {
    const service = makeService({ ports: [namedHttp] });
    const plan = run({ service, pods: [makePod(0, { containers: [app(8080)] }), makePod(1)] });
    assert.deepEqual(
      plan.toCreate.map((s) => [s.ports, s.endpoints.map((e) => e.targetRef?.name)]),
      [
        [[{ name: "http", port: 8080, protocol: "TCP" }], ["pod-0"]],
        [[], ["pod-1"]],
      ],
    );
  });
});
