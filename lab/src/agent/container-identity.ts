import { existsSync, readFileSync } from "node:fs";
import type { Container, Pod } from "kubernetes-types/core/v1.js";
import { closedFolders, hostProgramInContainerPath } from "./container-path.js";
import type { ImageLayer } from "./image-catalog.js";
import { passwdGroupOf, processIdentity, setprivArgv } from "./security-context.js";

/** What sandbox-command.ts needs to start a container's process as its securityContext says. */
export interface SandboxIdentity {
  setpriv: string[];
  readOnlyMount: string | undefined;
  passDirs: string[];
}

/**
 * The container's identity for its sandbox (security-context.ts), or the kubelet's error. Its groups come from the
 * image's /etc/passwd: the layer's when it has one, else the host's, which the root shows under it. A non-root
 * process gets the host's closed folders above the programs it runs made passable (container-path.ts).
 */
export function containerIdentity(
  pod: Pod,
  container: Container,
  run: { argv: string[]; layer?: ImageLayer | undefined },
  node: string,
): SandboxIdentity | { error: string } {
  const passwd = () => {
    const files = run.layer?.entries.filter((e) => e.path === "/etc/passwd") ?? [];
    const source =
      files.map((e) => ("copy" in e ? e.copy : "link" in e ? e.link : "")).find((p) => p) ?? "/etc/passwd";
    return existsSync(source) ? readFileSync(source, "utf8") : "";
  };
  const id = processIdentity(pod, container, (uid) => passwdGroupOf(passwd(), uid));
  if ("error" in id) return id;
  const programs = [
    node,
    ...(run.argv[0]?.startsWith("/") ? [run.argv[0]] : []),
    ...(run.layer?.entries ?? []).flatMap((e) => ("link" in e ? [e.link] : [])),
  ];
  const setpriv = hostProgramInContainerPath("setpriv");
  const mount = hostProgramInContainerPath("mount");
  if (!setpriv || (id.readOnlyRoot && !mount))
    return {
      error: `this host has no ${setpriv ? "mount" : "setpriv"} (util-linux), which a securityContext needs here`,
    };
  return {
    setpriv: [setpriv, ...setprivArgv(id).slice(1)],
    readOnlyMount: id.readOnlyRoot ? mount : undefined,
    passDirs: id.uid === 0 ? [] : closedFolders(programs),
  };
}
