/** The files the page loads besides its own: module URL → what to import it as (the page's import map). */
export const vendorModules: Record<string, { url: string; specifier: string }> = {
  preact: { url: "/vendor/preact.mjs", specifier: "preact" },
  "preact/hooks": { url: "/vendor/preact-hooks.mjs", specifier: "preact/hooks" },
  "preact/jsx-runtime": { url: "/vendor/preact-jsx-runtime.mjs", specifier: "preact/jsx-runtime" },
  uplot: { url: "/vendor/uPlot.esm.js", specifier: "uplot/dist/uPlot.esm.js" },
};
export const uplotCss = { url: "/vendor/uPlot.min.css", specifier: "uplot/dist/uPlot.min.css" };

const importMap = JSON.stringify({
  imports: Object.fromEntries(Object.entries(vendorModules).map(([name, m]) => [name, m.url])),
});

const style = `
:root { color-scheme: light; --fg: #1d2327; --muted: #667085; --line: #e4e7ec; --bg: #f8f9fb; --ok: #107c41;
  --warn: #b54708; --bad: #b42318; --accent: #2f5bd3; }
* { box-sizing: border-box; }
body { margin: 0; font: 13px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
  background: var(--bg); }
header { display: flex; gap: 16px; align-items: baseline; padding: 10px 20px; background: #fff;
  border-bottom: 1px solid var(--line); position: sticky; top: 0; z-index: 2; }
header h1 { font-size: 16px; margin: 0; }
main { padding: 12px 20px 40px; display: grid; gap: 14px; }
section { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 10px 14px; }
section h2 { font-size: 14px; margin: 0 0 8px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 3px 8px 3px 0; border-bottom: 1px solid var(--line); vertical-align: top;
  white-space: nowrap; }
th { color: var(--muted); font-weight: 500; }
td.num, th.num { text-align: right; }
.muted { color: var(--muted); }
.ok { color: var(--ok); } .warn { color: var(--warn); } .bad { color: var(--bad); }
.badge { display: inline-block; padding: 0 6px; border-radius: 9px; font-size: 11px; border: 1px solid currentColor; }
.warning { background: #fff4e5; border: 1px solid #f5c07a; color: #7a3f00; border-radius: 6px; padding: 8px 12px; }
details.svc { border-top: 1px solid var(--line); padding: 4px 0; }
details.svc > summary { cursor: pointer; display: flex; gap: 12px; align-items: baseline; flex-wrap: wrap; }
details.svc > summary b { min-width: 260px; }
.svc-body { display: grid; grid-template-columns: minmax(360px, 1fr) minmax(360px, 1.3fr); gap: 14px;
  padding: 8px 0 6px 16px; }
.changes { max-height: 150px; overflow: auto; font-size: 12px; margin: 4px 0 0; padding-left: 16px; }
.zones { display: flex; gap: 18px; flex-wrap: wrap; margin-bottom: 8px; }
code { font: 12px ui-monospace, SFMono-Regular, Menlo, monospace; }
.conn { margin-left: auto; }
`;

const escapeHtml = (text: string) =>
  text.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c] ?? c);

/** The page: a shell the compiled script (page/main.tsx) fills from the server's events. */
export function pageHtml(title: string, built: boolean): string {
  const body = built
    ? `<div id="app"><p class="muted" style="padding: 20px">connecting…</p></div>
<script type="module" src="/app/main.js"></script>`
    : `<p style="padding: 20px">The dashboard's page is not built: run <code>npm run build -w @switchyard/lab</code>
(or <code>npx turbo run build</code>) and reload.</p>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<link rel="icon" href="data:,">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="${uplotCss.url}">
<style>${style}</style>
<script type="importmap">${importMap}</script>
</head>
<body>
${body}
</body>
</html>
`;
}
