// The Clients page: the connected TAK clients (GET /api/map, whose client
// list is /Clients' with each client's latest position), every 2 seconds.
import { api } from "./api.js";
import { ago, every, formatLatLon, h, section, setChildren, table } from "./ui.js";

export function mountClients(root) {
  const body = h("div");
  root.append(section("Connected clients", null, body));
  const stop = every(2000, async () => {
    const res = await api("GET", "api/map?limit=1");
    const rows = res.clients.map((c) => [
      c.lat === null ? c.callsign || c.uid : h("a", { href: `#/map?focus=${encodeURIComponent(c.uid)}` }, c.callsign || c.uid),
      [c.team, c.role].filter(Boolean).join(" / ") || "—",
      h("span", { class: "mono" }, c.uid),
      c.address,
      c.listener + (c.user ? ` (${c.user})` : ""),
      ago(c.lastSeen),
      formatLatLon(c.lat, c.lon),
    ]);
    setChildren(
      body,
      h("p", { class: "counts" }, `${res.clients.length} connected`),
      table(["Callsign", "Team / role", "UID", "Address", "Listener", "Last seen", "Position"], rows, "No client is connected."),
    );
  });
  return stop;
}
