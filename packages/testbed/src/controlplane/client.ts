import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type ClientCertificate, clientCertificateAccess, HttpRestClient } from "@switchyard/kube";

/** The admin identity of a control plane's state folder (client certificate in system:masters). */
export function adminCredentials(server: string, controlPlaneDir: string): ClientCertificate {
  const pki = join(controlPlaneDir, "pki");
  return {
    server,
    ca: readFileSync(join(pki, "ca.crt")),
    cert: readFileSync(join(pki, "admin.crt")),
    key: readFileSync(join(pki, "admin.key")),
  };
}

/**
 * @switchyard/kube's client as the lab's commands, scenarios and node agents use it: by client certificate, on
 * paths (`call`, `watchPath`) or resource descriptors.
 */
export function labClient(creds: ClientCertificate): HttpRestClient {
  return new HttpRestClient(clientCertificateAccess(creds), { userAgent: "switchyard-lab" });
}
