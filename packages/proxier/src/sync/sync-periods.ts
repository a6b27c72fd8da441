// kube-proxy's sync periods, apart from the runner that keeps them: the renderers read them too and must not
// load the runner's timers.

/** kube-proxy's hourly "repair drift" full sync (proxyutil.FullSyncPeriod). */
export const FULL_SYNC_PERIOD_MS = 60 * 60 * 1000;

/** kube-proxy's defaults: --min-sync-period 1s, --sync-period 30s. */
export const DEFAULT_MIN_SYNC_PERIOD_MS = 1000;
export const DEFAULT_SYNC_PERIOD_MS = 30_000;
