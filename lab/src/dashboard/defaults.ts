/** Where `switchyard-lab dashboard` listens unless --port says otherwise (127.0.0.1 only). */
export const defaultDashboardPort = 7420;

/** The line `up` ends its summary with: how to open the dashboard, on either runtime. */
export const dashboardHint = `dashboard:  npx switchyard-lab dashboard   (then http://127.0.0.1:${defaultDashboardPort}/)`;
