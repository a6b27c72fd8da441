import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import type { DashboardView } from "../view-model.js";
import { Dns } from "./dns.js";
import { clock } from "./format.js";
import { Migration } from "./migration.js";
import { Nodes } from "./nodes.js";
import { Services } from "./services.js";

type Connection = "connecting" | "live" | "reconnecting";

/** The server's view as it streams in (server-sent events; the browser reconnects by itself). */
function useLiveView(): { view: DashboardView | undefined; connection: Connection } {
  const [view, setView] = useState<DashboardView>();
  const [connection, setConnection] = useState<Connection>("connecting");
  useEffect(() => {
    const events = new EventSource("/api/events");
    events.addEventListener("view", (e) => {
      setView(JSON.parse((e as MessageEvent<string>).data) as DashboardView);
      setConnection("live");
    });
    events.onerror = () => setConnection("reconnecting");
    return () => events.close();
  }, []);
  return { view, connection };
}

function App() {
  const { view, connection } = useLiveView();
  if (!view?.lab)
    return (
      <p class="muted" style="padding: 20px">
        connecting…
      </p>
    );
  const now = view.at;
  return (
    <>
      <header>
        <h1>switchyard lab: {view.lab.name}</h1>
        <span class="muted">runtime {view.lab.runtime}</span>
        <span class="muted">updated {clock(view.at)}</span>
        <span class={`conn ${connection === "live" ? "ok" : "warn"}`} data-testid="connection">
          {connection}
        </span>
      </header>
      <main>
        {view.notSynced.length > 0 && <p class="muted">waiting for: {view.notSynced.join("; ")}</p>}
        {view.warnings.map((w) => (
          <div class="warning" key={w.id} data-warning={w.id}>
            {w.text}
          </div>
        ))}
        {view.migration && <Migration migration={view.migration} now={now} />}
        <Nodes nodes={view.nodes} proxies={view.proxies} now={now} />
        <Services services={view.services} now={now} />
        <Dns dns={view.dns} now={now} />
      </main>
    </>
  );
}

const root = document.getElementById("app");
if (root) {
  root.replaceChildren();
  render(<App />, root);
}
