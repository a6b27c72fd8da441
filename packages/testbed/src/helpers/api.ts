// Tests' verbs for a test control plane's kube-apiserver: @switchyard/kube's client on paths, with the admin
// client certificate from the control plane's state folder. Failures are @switchyard/kube's ApiError.
import { type HttpRestClient, type KubeObject, patchContentTypes, type WatchEvent } from "@switchyard/kube";
import { adminCredentials, labClient } from "../controlplane/client.js";

export interface Watch {
  stop(): void;
}

export class Api {
  readonly client: HttpRestClient;

  constructor(server: string, stateDir: string) {
    this.client = labClient(adminCredentials(server, stateDir));
  }

  /** A PATCH without a content type is a merge patch. */
  call<T>(method: string, path: string, body?: unknown, contentType?: string): Promise<T> {
    const type = contentType ?? (method === "PATCH" ? patchContentTypes.merge : undefined);
    return this.client.call<T>(method, path, body, type);
  }

  get<T>(path: string): Promise<T> {
    return this.call<T>("GET", path);
  }

  post<T>(path: string, body: unknown): Promise<T> {
    return this.call<T>("POST", path, body);
  }

  put<T>(path: string, body: unknown): Promise<T> {
    return this.call<T>("PUT", path, body);
  }

  mergePatch<T>(path: string, body: unknown): Promise<T> {
    return this.call<T>("PATCH", path, body);
  }

  delete<T>(path: string, body?: unknown): Promise<T> {
    return this.call<T>("DELETE", path, body);
  }

  /**
   * Streams watch events for `path` (a collection) from `resourceVersion` on, without bookmarks. Resolves once
   * the server accepted the watch, so nothing written afterwards is missed.
   */
  async watch<T extends KubeObject>(
    path: string,
    resourceVersion: string,
    onEvent: (e: WatchEvent<T>) => void,
  ): Promise<Watch> {
    const abort = new AbortController();
    const events = await this.client.watchPath<T>(path, {
      resourceVersion,
      allowWatchBookmarks: false,
      signal: abort.signal,
    });
    // A stream that breaks ends the events; stopping it is how a test lets it go.
    void (async () => {
      for await (const e of events) onEvent(e);
    })().catch(() => {});
    return { stop: () => abort.abort() };
  }

  close(): void {
    this.client.close();
  }
}
