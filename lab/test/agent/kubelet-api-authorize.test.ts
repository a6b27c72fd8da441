import assert from "node:assert/strict";
import type { Socket } from "node:net";
import { describe, test } from "node:test";
import { authenticatedUser, certificateUser } from "../../src/agent/kubelet-api/authenticate.js";
import { nodeRequestAttributes, WebhookAuthorizer } from "../../src/agent/kubelet-api/authorize.js";

describe("kubelet API authorization: the kubelet's request attributes", () => {
  const attrs = (method: string, path: string) => {
    const a = nodeRequestAttributes(method, path, "node-1");
    return `${a.verb} ${a.subresources.join(",")}`;
  };

  test("fine-grained subresources first (pods, healthz, configz), then the coarse one; proxy for the rest", () => {
    assert.equal(attrs("GET", "/pods"), "get pods,proxy");
    assert.equal(attrs("GET", "/runningpods/"), "get pods,proxy");
    assert.equal(attrs("GET", "/healthz"), "get healthz,proxy");
    assert.equal(attrs("GET", "/healthz/ping"), "get healthz,proxy");
    assert.equal(attrs("GET", "/podsx"), "get proxy", "a sibling path is not a subpath");
    assert.equal(attrs("GET", "/stats/summary"), "get stats");
    assert.equal(attrs("GET", "/metrics/cadvisor"), "get metrics");
    assert.equal(attrs("GET", "/logs/syslog"), "get log");
    assert.equal(attrs("GET", "/containerLogs/default/p/c"), "get proxy");
    assert.equal(attrs("POST", "/exec/default/p/c"), "create proxy");
    assert.equal(attrs("POST", "/portForward/default/p"), "create proxy");
  });

  test("the user is the certificate's CN, its groups the O values and system:authenticated", () => {
    assert.deepEqual(certificateUser({ CN: "kube-apiserver-kubelet-client", O: "kubeadm:cluster-admins" }), {
      name: "kube-apiserver-kubelet-client",
      groups: ["kubeadm:cluster-admins", "system:authenticated"],
    });
    assert.deepEqual(certificateUser({ CN: "jane", O: ["a", "b"] }).groups, [
      "a",
      "b",
      "system:authenticated",
    ]);
    assert.equal(certificateUser({ CN: ["first", "last"] }).name, "last", "Go keeps the last CN it reads");
  });
});

describe("kubelet API authentication: x509 with anonymous off", () => {
  /** A TLS socket as Node hands it to the server: verified against the CA or not, with the peer's subject. */
  const socket = (authorized: boolean, subject: Record<string, string | string[]>) =>
    ({ authorized, getPeerCertificate: () => ({ subject }) }) as unknown as Socket;

  test("a certificate of the CA with a CN is that user", () => {
    assert.deepEqual(authenticatedUser(socket(true, { CN: "jane", O: "readers" })), {
      name: "jane",
      groups: ["readers", "system:authenticated"],
    });
  });

  test('no CN, or an empty one, names nobody: unauthenticated (the kubelet\'s 401), never user ""', () => {
    assert.equal(authenticatedUser(socket(true, { O: "system:masters" })), undefined);
    assert.equal(authenticatedUser(socket(true, { CN: "", O: "system:masters" })), undefined);
    assert.equal(authenticatedUser(socket(true, { CN: ["jane", ""] })), undefined, "the last CN counts");
  });

  test("no certificate, or one the CA did not sign, is unauthenticated", () => {
    assert.equal(authenticatedUser(socket(false, {})), undefined);
    assert.equal(authenticatedUser(socket(false, { CN: "jane" })), undefined);
  });
});

describe("kubelet API authorization: SubjectAccessReviews", () => {
  /** An apiserver that allows the listed subresources, counting the reviews it answers. */
  function apiserver(allowed: string[], fail = false) {
    const reviews: string[] = [];
    const client = {
      call: async <T>(method: string, path: string, body?: unknown): Promise<T> => {
        assert.equal(`${method} ${path}`, "POST /apis/authorization.k8s.io/v1/subjectaccessreviews");
        const spec = (body as { spec: { user: string; resourceAttributes: Record<string, string> } }).spec;
        reviews.push(`${spec.user} ${Object.values(spec.resourceAttributes).join("/")}`);
        if (fail) throw new Error("apiserver down");
        return { status: { allowed: allowed.includes(spec.resourceAttributes.subresource ?? "") } } as T;
      },
    };
    return { client, reviews };
  }
  const jane = { name: "jane", groups: ["system:authenticated"] };

  test("one review per subresource until one is allowed; none allowed is the kubelet's 403", async () => {
    const { client, reviews } = apiserver(["proxy"]);
    const authorizer = new WebhookAuthorizer(client, "node-1");
    assert.deepEqual(await authorizer.authorize(jane, "GET", "/pods"), { allowed: true });
    assert.deepEqual(reviews, ["jane get//v1/nodes/pods/node-1", "jane get//v1/nodes/proxy/node-1"]);
    const { client: strict } = apiserver(["pods"]);
    assert.deepEqual(
      await new WebhookAuthorizer(strict, "node-1").authorize(jane, "GET", "/containerLogs/a/b/c"),
      {
        allowed: false,
        status: 403,
        body: "Forbidden (user=jane, verb=get, resource=nodes, subresource(s)=[proxy])\n",
      },
    );
  });

  test("answers are cached: an allow for 5 minutes, a denial for 30 seconds", async () => {
    const { client, reviews } = apiserver(["healthz"]);
    let now = 0;
    const authorizer = new WebhookAuthorizer(client, "node-1", () => now);
    await authorizer.authorize(jane, "GET", "/healthz");
    await authorizer.authorize(jane, "GET", "/healthz");
    assert.equal(reviews.length, 1);
    const denied = await authorizer.authorize(jane, "GET", "/exec/a/b/c");
    assert.equal(denied.allowed, false);
    now = 29_000;
    await authorizer.authorize(jane, "GET", "/exec/a/b/c");
    assert.equal(reviews.length, 2, "the denial is still cached");
    now = 31_000;
    await authorizer.authorize(jane, "GET", "/exec/a/b/c");
    await authorizer.authorize(jane, "GET", "/healthz");
    assert.equal(reviews.length, 3, "the denial expired, the allow did not");
  });

  test("a review that fails is the kubelet's 500 naming the attributes", async () => {
    const { client } = apiserver([], true);
    assert.deepEqual(await new WebhookAuthorizer(client, "node-1").authorize(jane, "GET", "/pods"), {
      allowed: false,
      status: 500,
      body: "Authorization error (user=jane, verb=get, resource=nodes, subresource=pods)",
    });
  });
});
