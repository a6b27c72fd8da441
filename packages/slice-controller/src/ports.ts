import type { Container, Pod, Service, ServicePort } from "kubernetes-types/core/v1.js";
import type { EndpointPort } from "./types.js";

// The apiserver defaults these; treating an absent value as the default keeps hand-built objects
// (tests, dry runs) behaving like stored ones.
const protocolOf = (protocol: string | undefined): string => protocol ?? "TCP";

function namedPortIn(containers: readonly Container[], name: string, protocol: string): number | undefined {
  for (const container of containers) {
    for (const port of container.ports ?? []) {
      if (port.name === name && protocolOf(port.protocol) === protocol) return port.containerPort;
    }
  }
  return undefined;
}

/**
 * Resolves a Service port's targetPort on a Pod: a number is used as is; a name is looked up among
 * the containers, then among sidecars (init containers with restartPolicy Always), matching protocol
 * too. Undefined means the Pod does not expose the port.
 */
export function findPort(pod: Pod, servicePort: ServicePort): number | undefined {
  const target = servicePort.targetPort ?? servicePort.port;
  if (typeof target === "number") return target;
  const protocol = protocolOf(servicePort.protocol);
  const inContainers = namedPortIn(pod.spec?.containers ?? [], target, protocol);
  if (inContainers !== undefined) return inContainers;
  const sidecars = (pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === "Always");
  return namedPortIn(sidecars, target, protocol);
}

/**
 * The slice-level ports a Pod would be published with. A Service port the Pod cannot resolve is left
 * out for that Pod only, so such Pods land in a slice of their own port set rather than being dropped.
 */
export function endpointPortsFor(service: Service, pod: Pod): EndpointPort[] {
  const ports: EndpointPort[] = [];
  for (const servicePort of service.spec?.ports ?? []) {
    const port = findPort(pod, servicePort);
    if (port === undefined) continue;
    const endpointPort: EndpointPort = {
      name: servicePort.name ?? "",
      port,
      protocol: protocolOf(servicePort.protocol),
    };
    if (servicePort.appProtocol !== undefined) endpointPort.appProtocol = servicePort.appProtocol;
    ports.push(endpointPort);
  }
  return ports;
}

function portText(port: EndpointPort): string {
  return JSON.stringify([
    port.name ?? null,
    port.port ?? null,
    port.protocol ?? null,
    port.appProtocol ?? null,
  ]);
}

/**
 * A key that is equal for two port lists exactly when they hold the same ports in any order;
 * upstream's port-map hash. An absent list and an empty one share a key.
 */
export function portMapKey(ports: readonly EndpointPort[] | undefined): string {
  return JSON.stringify((ports ?? []).map(portText).sort());
}
