import { createReadStream, readdirSync, statSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { join, normalize } from "node:path";

const escapeHtml = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&#34;", "'": "&#39;" })[c] ?? c,
  );

/** A folder as Go's http.FileServer lists it: one link per entry, sorted, folders with a trailing slash. */
export function directoryListing(entries: ReadonlyArray<{ name: string; dir: boolean }>): string {
  const links = [...entries]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((e) => {
      const name = e.dir ? `${e.name}/` : e.name;
      return `<a href="${escapeHtml(encodeURIComponent(e.name) + (e.dir ? "/" : ""))}">${escapeHtml(name)}</a>\n`;
    });
  return `<!doctype html>\n<meta name="viewport" content="width=device-width">\n<pre>\n${links.join("")}</pre>\n`;
}

/**
 * GET /logs/<path>: the kubelet serves the node's /var/log with Go's file server (ServeLogs); a lab node's log
 * folder is the lab's, `<state>/logs` (the agents' and the lab's own processes' logs). A folder is listed, a
 * file sent as text; anything outside the folder or missing is a 404.
 */
export function serveNodeLogs(res: ServerResponse, logsDir: string, pathname: string): void {
  const notFound = () => {
    res.writeHead(404, { "Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff" });
    res.end("404 page not found\n");
  };
  const relative = normalize(decodeURIComponent(pathname.replace(/^\/logs\/?/, "/")));
  if (relative.split("/").includes("..")) {
    notFound();
    return;
  }
  const path = join(logsDir, relative);
  let stat: ReturnType<typeof statSync>;
  try {
    stat = statSync(path);
  } catch {
    notFound();
    return;
  }
  if (stat.isDirectory()) {
    if (!pathname.endsWith("/")) {
      res.writeHead(301, { Location: `${pathname}/` });
      res.end();
      return;
    }
    const entries = readdirSync(path, { withFileTypes: true }).map((e) => ({
      name: e.name,
      dir: e.isDirectory(),
    }));
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
    res.end(directoryListing(entries));
    return;
  }
  res.writeHead(200, { "Content-Type": "text/plain; charset=utf-8", "Content-Length": stat.size });
  createReadStream(path).pipe(res);
}
