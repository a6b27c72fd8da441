/**
 * The one Corefile edit the lameduck scenario makes: the duration of `health { lameduck D }`, as a person would
 * edit the coredns ConfigMap. A Corefile without that line is an error, never a silent no-op.
 */
export function withLameduck(corefile: string, duration: string): string {
  if (!/^\d+(ms|s|m)$/.test(duration))
    throw new Error(`scenario lameduck: "${duration}" is not a duration like 0s, 500ms or 5s`);
  const line = /(^\s*lameduck\s+)\S+/m;
  if (!line.test(corefile)) throw new Error("coredns ConfigMap: the Corefile has no `lameduck` line");
  return corefile.replace(line, `$1${duration}`);
}

export const lameduckOf = (corefile: string): string | undefined =>
  /^\s*lameduck\s+(\S+)/m.exec(corefile)?.[1];
