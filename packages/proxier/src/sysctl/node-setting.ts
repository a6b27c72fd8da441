// Kernel settings kube-proxy makes at start-up, as data, and the one function that applies
// them through an injected reader/writer. Like kube-proxy, a value already right is never
// written (so a read-only /proc/sys only matters when something must change), and a failed
// write stops start-up with the name, the value and the kernel's answer.

export interface NodeSetting {
  /** A sysctl name ("net.netfilter.nf_conntrack_max"), or the absolute path of a module parameter. */
  readonly key: string;
  readonly value: number;
  /** "differs": written unless it already has this value; "lower": only raised, never lowered. */
  readonly writeWhen: "differs" | "lower";
  /** Why kube-proxy sets it. */
  readonly reason: string;
}

/** File access; procFiles() is the real one, tests pass a map. */
export interface SettingFiles {
  read(path: string): Promise<string>;
  write(path: string, text: string): Promise<void>;
}

export interface SettingChange {
  readonly key: string;
  /** undefined when the old value could not be read. */
  readonly before: number | undefined;
  readonly after: number;
}

/** A write the kernel refused; callers that word it as upstream does read the parts. */
export class NodeSettingError extends Error {
  override name = "NodeSettingError";
  constructor(
    message: string,
    readonly key: string,
    readonly value: number,
    override readonly cause: Error,
  ) {
    super(message);
  }
}

/** "/proc/sys/net/netfilter/nf_conntrack_max" for "net.netfilter.nf_conntrack_max". */
export function settingPath(key: string): string {
  return key.startsWith("/") ? key : `/proc/sys/${key.replaceAll(".", "/")}`;
}

/** The name as upstream's sysctl helper prints it: "net/ipv4/vs/conntrack". */
export function sysctlName(key: string): string {
  return key.startsWith("/") ? key : key.replaceAll(".", "/");
}

/** Upstream's EnsureSysctl error text for a refused write. */
export function ensureSysctlMessage(err: NodeSettingError): string {
  return `can't set sysctl ${sysctlName(err.key)} to ${err.value}: ${err.cause.message}`;
}

async function readNumber(files: SettingFiles, path: string): Promise<number | undefined> {
  try {
    const n = Number.parseInt((await files.read(path)).trim(), 10);
    return Number.isNaN(n) ? undefined : n;
  } catch {
    return undefined;
  }
}

/** Whether `setting` needs a write when the kernel holds `current`. */
export function needsWrite(setting: NodeSetting, current: number | undefined): boolean {
  if (current === undefined) return true;
  return setting.writeWhen === "lower" ? current < setting.value : current !== setting.value;
}

/** Applies the settings in order; throws NodeSettingError at the first write the kernel refuses. */
export async function applyNodeSettings(
  files: SettingFiles,
  settings: readonly NodeSetting[],
  onChange: (change: SettingChange) => void = () => {},
): Promise<SettingChange[]> {
  const changes: SettingChange[] = [];
  for (const s of settings) {
    const path = settingPath(s.key);
    const before = await readNumber(files, path);
    if (!needsWrite(s, before)) continue;
    try {
      await files.write(path, String(s.value));
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code === "EROFS" ? " (read-only file system)" : "";
      const cause = err as Error;
      throw new NodeSettingError(
        `can't set ${s.key} to ${s.value}${why}: ${cause.message}`,
        s.key,
        s.value,
        cause,
      );
    }
    const change = { key: s.key, before, after: s.value };
    changes.push(change);
    onChange(change);
  }
  return changes;
}

/** Reads one setting's current value; undefined when it cannot be read. */
export function readNodeSetting(files: SettingFiles, key: string): Promise<number | undefined> {
  return readNumber(files, settingPath(key));
}
