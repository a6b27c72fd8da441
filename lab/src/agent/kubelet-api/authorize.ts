import type { HttpRestClient } from "@switchyard/kube";
import type { RequestUser } from "./authenticate.js";

export type { RequestUser } from "./authenticate.js";

/** What the kubelet asks the authorizer for one request: a verb on the Node, under one subresource or the next. */
export interface NodeRequestAttributes {
  verb: string;
  node: string;
  /** In the order they are asked: the first one allowed lets the request through. */
  subresources: string[];
}

const verbs: Record<string, string> = {
  POST: "create",
  GET: "get",
  PUT: "update",
  PATCH: "patch",
  DELETE: "delete",
};

/** The kubelet's isSubpath: the path itself, or below it (a trailing slash on `path` does not count). */
function isSubpath(subpath: string, path: string): boolean {
  const p = path.replace(/\/$/, "");
  return subpath === p || (subpath.startsWith(p) && subpath[p.length] === "/");
}

/** The subresource the fine-grained authorization (KubeletFineGrainedAuthz, GA and locked on) asks first. */
const fineGrained: ReadonlyArray<[path: string, subresource: string]> = [
  ["/allocatedPods", "pods"],
  ["/pods", "pods"],
  ["/healthz", "healthz"],
  ["/configz", "configz"],
  ["/runningpods/", "pods"],
];
/** Then one of these, or proxy for everything else (containerLogs, exec, attach, portForward, run among them). */
const coarse: ReadonlyArray<[path: string, subresource: string]> = [
  ["/stats/", "stats"],
  ["/metrics", "metrics"],
  ["/logs/", "log"],
  ["/checkpoint/", "checkpoint"],
  ["/statusz", "statusz"],
  ["/flagz", "configz"],
];

/** The kubelet's mapping of a request to the Node attributes it authorizes (nodeAuthorizerAttributesGetter). */
export function nodeRequestAttributes(method: string, path: string, node: string): NodeRequestAttributes {
  const first = fineGrained.find(([p]) => isSubpath(path, p))?.[1];
  const then = coarse.find(([p]) => isSubpath(path, p))?.[1] ?? "proxy";
  return { verb: verbs[method] ?? "", node, subresources: first ? [first, then] : [then] };
}

/** The SubjectAccessReview the kubelet's webhook authorizer sends for one subresource. */
export function subjectAccessReview(user: RequestUser, attrs: NodeRequestAttributes, subresource: string) {
  return {
    apiVersion: "authorization.k8s.io/v1",
    kind: "SubjectAccessReview",
    spec: {
      user: user.name,
      groups: user.groups,
      resourceAttributes: {
        verb: attrs.verb,
        group: "",
        version: "v1",
        resource: "nodes",
        subresource,
        name: attrs.node,
      },
    },
  };
}

/** How a request ended in authorization: let through, or the status and body the kubelet answers. */
export type Decision = { allowed: true } | { allowed: false; status: number; body: string };

/** What the kubelet answers when no subresource is allowed: one line naming all it asked for, Go's %v of a slice. */
export function forbiddenBody(user: RequestUser, attrs: NodeRequestAttributes): string {
  return `Forbidden (user=${user.name}, verb=${attrs.verb}, resource=nodes, subresource(s)=[${attrs.subresources.join(" ")}])\n`;
}

/**
 * The kubelet's --authorization-mode=Webhook: each request's attributes go to the apiserver as
 * SubjectAccessReviews, one subresource after the other until one is allowed; answers are cached as the
 * kubelet's defaults say (--authorization-webhook-cache-authorized-ttl 5m, -unauthorized-ttl 30s).
 */
export class WebhookAuthorizer {
  private readonly cache = new Map<string, { allowed: boolean; until: number }>();

  constructor(
    private readonly client: Pick<HttpRestClient, "call">,
    private readonly node: string,
    private readonly now: () => number = Date.now,
  ) {}

  async authorize(user: RequestUser, method: string, path: string): Promise<Decision> {
    const attrs = nodeRequestAttributes(method, path, this.node);
    for (const subresource of attrs.subresources) {
      let allowed: boolean;
      try {
        allowed = await this.review(user, attrs, subresource);
      } catch {
        const body = `Authorization error (user=${user.name}, verb=${attrs.verb}, resource=nodes, subresource=${subresource})`;
        return { allowed: false, status: 500, body };
      }
      if (allowed) return { allowed: true };
    }
    return { allowed: false, status: 403, body: forbiddenBody(user, attrs) };
  }

  private async review(
    user: RequestUser,
    attrs: NodeRequestAttributes,
    subresource: string,
  ): Promise<boolean> {
    const review = subjectAccessReview(user, attrs, subresource);
    const key = JSON.stringify(review.spec);
    const cached = this.cache.get(key);
    if (cached && cached.until > this.now()) return cached.allowed;
    const answer = await this.client.call<{ status?: { allowed?: boolean } }>(
      "POST",
      "/apis/authorization.k8s.io/v1/subjectaccessreviews",
      review,
    );
    const allowed = answer.status?.allowed === true;
    this.cache.set(key, { allowed, until: this.now() + (allowed ? 300_000 : 30_000) });
    return allowed;
  }
}

/** An authenticated request, authorized for its method and path; AlwaysAllow without an authorizer. */
export function authorizeRequest(
  user: RequestUser,
  method: string,
  url: URL,
  authorizer: Pick<WebhookAuthorizer, "authorize"> | undefined,
): Promise<Decision> {
  if (!authorizer) return Promise.resolve({ allowed: true });
  return authorizer.authorize(user, method, url.pathname);
}
