import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { TLSSocket } from "node:tls";
import { clientCertificateAccess } from "../../src/rest/client-certificate.js";
import { HttpRestClient } from "../../src/rest/http-client.js";

// A CA, a serving certificate for 127.0.0.1 and a client certificate (CN admin, O system:masters), as the lab's
// control plane has them.
function pki(dir: string): (file: string) => Buffer {
  const ssl = (args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  const key = (name: string) =>
    ssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", name]);
  key("ca.key");
  ssl(["req", "-x509", "-new", "-key", "ca.key", "-subj", "/CN=test-ca", "-days", "1", "-out", "ca.crt"]);
  const sign = (name: string, subject: string, extensions: string) => {
    key(`${name}.key`);
    writeFileSync(join(dir, `${name}.ext`), extensions);
    ssl(["req", "-new", "-key", `${name}.key`, "-subj", subject, "-out", `${name}.csr`]);
    const ca = ["-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-days", "1"];
    ssl(["x509", "-req", "-in", `${name}.csr`, ...ca, "-extfile", `${name}.ext`, "-out", `${name}.crt`]);
  };
  sign("server", "/CN=apiserver", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n");
  sign("admin", "/O=system:masters/CN=admin", "extendedKeyUsage=clientAuth\n");
  return (file) => readFileSync(join(dir, file));
}

let server: Server;
let url = "";
let file: (name: string) => Buffer;

before(async () => {
  file = pki(mkdtempSync(join(tmpdir(), "kube-client-cert-")));
  server = createServer(
    { key: file("server.key"), cert: file("server.crt"), ca: file("ca.crt"), requestCert: true },
    (req, res) => {
      const socket = req.socket as TLSSocket;
      if (!socket.authorized) {
        res.writeHead(401, { "Content-Type": "application/json" });
        res.end(
          JSON.stringify({
            kind: "Status",
            code: 401,
            reason: "Unauthorized",
            message: "no client certificate",
          }),
        );
        return;
      }
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ user: socket.getPeerCertificate().subject.CN }));
    },
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  server.closeAllConnections();
  server.close();
});

describe("clientCertificateAccess", () => {
  test("authenticates with the client certificate and verifies the server against the CA", async () => {
    const access = clientCertificateAccess({
      server: url,
      ca: file("ca.crt"),
      cert: file("admin.crt"),
      key: file("admin.key"),
    });
    assert.equal(access.getCurrentCluster()?.server, url);
    const client = new HttpRestClient(access);
    try {
      assert.deepEqual(await client.call("GET", "/api/v1/namespaces"), { user: "admin" });
    } finally {
      client.close();
    }
  });

  test("a server the CA did not sign is refused", async () => {
    const other = pki(mkdtempSync(join(tmpdir(), "kube-client-cert-other-")));
    const client = new HttpRestClient(
      clientCertificateAccess({
        server: url,
        ca: other("ca.crt"),
        cert: file("admin.crt"),
        key: file("admin.key"),
      }),
    );
    try {
      await assert.rejects(client.call("GET", "/api/v1/namespaces"), /certificate/);
    } finally {
      client.close();
    }
  });
});
