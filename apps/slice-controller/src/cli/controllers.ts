/** The two kube-controller-manager controllers this program replaces, by their --controllers names. */
export const ENDPOINTSLICE_CONTROLLER = "endpointslice-controller";
export const MIRRORING_CONTROLLER = "endpointslice-mirroring-controller";

// kube-controller-manager's aliases for the same two (the names older releases used).
const aliases: Record<string, string> = {
  endpointslice: ENDPOINTSLICE_CONTROLLER,
  endpointslicemirroring: MIRRORING_CONTROLLER,
};

export interface EnabledControllers {
  endpointSlice: boolean;
  mirroring: boolean;
}

// An entry with its alias resolved, keeping a leading "-".
function canonical(entry: string): string {
  const negated = entry.startsWith("-");
  const name = negated ? entry.slice(1) : entry;
  return `${negated ? "-" : ""}${aliases[name] ?? name}`;
}

/**
 * kube-controller-manager's reading of --controllers, for our two: the first entry naming a controller
 * ("name" or "-name") decides it; otherwise "*" enables it, since both are on by default there. Entries for
 * kube-controller-manager's other controllers are accepted and have nothing to select here.
 */
export function enabledControllers(entries: readonly string[]): EnabledControllers {
  const resolved = entries.map(canonical);
  const enabled = (name: string) => {
    for (const entry of resolved) {
      if (entry === name) return true;
      if (entry === `-${name}`) return false;
    }
    return resolved.includes("*");
  };
  return { endpointSlice: enabled(ENDPOINTSLICE_CONTROLLER), mirroring: enabled(MIRRORING_CONTROLLER) };
}
