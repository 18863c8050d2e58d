// The Missions page: every mission (DataSync) with the sizes of its parts
// (GET /api/missions) and, for the one chosen (#/missions?name=...), its
// files, uids, subscribers, change log and log entries (GET
// /api/missions/{name}). Read only: clients change missions. Everything
// shown comes from clients and goes in as text (ui.js).
import { api, download } from "./api.js";
import { ago, formatBytes, formatLatLon, h, section, setChildren, showError, table } from "./ui.js";

export function mountMissions(root, query) {
  const chosen = query.get("name");
  const list = h("div", { id: "missions-list" });
  const detail = h("div", { id: "mission-detail" });
  const refresh = h("button", { type: "button", id: "missions-refresh", onclick: () => load() }, "Refresh");
  if (chosen !== null) root.append(section(`Mission ${chosen}`, [h("a", { href: "#/missions", class: "close-detail" }, "All missions")], detail));
  root.append(section("Missions", [refresh], list));

  async function load() {
    refresh.disabled = true;
    try {
      await Promise.all([loadList(), chosen !== null ? loadDetail() : null]);
    } finally {
      refresh.disabled = false;
    }
  }

  async function loadList() {
    try {
      const res = await api("GET", "api/missions");
      const rows = res.missions.map((m) =>
        h(
          "tr",
          { dataset: { mission: m.name }, class: m.name === chosen ? "selected" : null },
          h("td", null, h("a", { href: `#/missions?name=${encodeURIComponent(m.name)}` }, m.name)),
          h("td", null, m.tool || "—"),
          h("td", null, h("span", { class: "mono" }, m.creatorUid || "—")),
          h("td", null, ago(m.created)),
          h("td", { class: "num" }, String(m.contentCount)),
          h("td", { class: "num" }, String(m.uidCount)),
          h("td", { class: "num" }, String(m.subscriberCount)),
          h("td", { class: "num" }, String(m.logCount)),
        ),
      );
      setChildren(
        list,
        h("p", { class: "counts" }, `${res.missions.length} mission${res.missions.length === 1 ? "" : "s"}${res.truncated ? " (the first, by name)" : ""}`),
        table(["Name", "Tool", "Creator", "Created", "Files", "UIDs", "Subscribers", "Log entries"], rows, "No mission yet. Clients create missions (DataSync) through the client API."),
      );
    } catch (e) {
      showError("Missions", e);
    }
  }

  async function loadDetail() {
    try {
      const d = await api("GET", `api/missions/${encodeURIComponent(chosen)}`);
      setChildren(detail, ...missionDetail(d));
    } catch (e) {
      setChildren(detail, h("p", { class: "error" }, e.message));
      if (e.status !== 404) showError("Mission", e);
    }
  }

  load();
  return () => {};
}

function missionDetail(d) {
  const m = d.mission;
  const cut = (what, total, shown, newest) =>
    d.truncated[what] ? h("p", { class: "note" }, `Only the ${newest ? "newest" : "first"} ${shown}${total === null ? "" : ` of ${total}`} shown.`) : null;
  return [
    h(
      "dl",
      { class: "facts" },
      fact("Description", m.description || "—"),
      fact("Tool", m.tool || "—"),
      fact("Creator", h("span", { class: "mono" }, m.creatorUid || "—")),
      fact("Created", `${ago(m.created)} (${m.created})`),
      fact("Default role", m.defaultRole),
      fact("Keywords", m.keywords.length ? m.keywords.join(", ") : "—"),
      fact("Access", [m.passwordProtected ? "password" : "no password", m.inviteOnly ? "invitation only" : null].filter(Boolean).join(", ")),
    ),
    h("h3", null, `Files (${m.contentCount})`),
    cut("contents", m.contentCount, d.contents.length),
    h(
      "div",
      { id: "mission-files" },
      table(
        ["Name", "Size", "SHA-256", "Added by", "Added", ""],
        d.contents.map((c) => [
          c.name,
          formatBytes(c.size),
          h("span", { class: "mono", title: c.hash }, `${c.hash.slice(0, 12)}…`),
          h("span", { class: "mono" }, c.creatorUid || "—"),
          ago(c.added),
          h(
            "div",
            { class: "row-actions" },
            h("button", { type: "button", class: "small", onclick: () => download(`DataPackageTable/${c.hash}`, c.name).catch((e) => showError("Download", e)) }, "Download"),
          ),
        ]),
        "No file.",
      ),
    ),
    h("h3", null, `UIDs (${m.uidCount})`),
    cut("uids", m.uidCount, d.uids.length),
    h(
      "div",
      { id: "mission-uids" },
      table(
        ["Callsign", "UID", "Type", "Position", "Added by", "Added"],
        d.uids.map((u) => [
          u.lat === null ? u.callsign || "—" : h("a", { href: `#/map?focus=${encodeURIComponent(u.uid)}` }, u.callsign || u.uid),
          h("span", { class: "mono" }, u.uid),
          u.type || "—",
          formatLatLon(u.lat, u.lon),
          h("span", { class: "mono" }, u.creatorUid || "—"),
          ago(u.added),
        ]),
        "No uid.",
      ),
    ),
    h("h3", null, `Subscribers (${m.subscriberCount})`),
    cut("subscribers", m.subscriberCount, d.subscribers.length),
    h(
      "div",
      { id: "mission-subscribers" },
      table(
        ["Client UID", "User", "Role", "Since"],
        d.subscribers.map((s) => [h("span", { class: "mono" }, s.clientUid), s.username || "—", roleBadge(s.role), ago(s.created)]),
        "No subscriber.",
      ),
    ),
    d.externalData.length
      ? [
          h("h3", null, `External data (${d.externalData.length})`),
          table(
            ["Name", "Tool", "UID", "Notes"],
            d.externalData.map((x) => [x.name || "—", x.tool || "—", h("span", { class: "mono" }, x.uid), x.notes || "—"]),
            "",
          ),
        ]
      : null,
    h("h3", null, "Change log"),
    cut("changes", null, d.changes.length, true),
    h(
      "div",
      { id: "mission-changes" },
      table(
        ["Time", "Change", "What", "By"],
        d.changes.map((c) => [when(c.time), h("span", { class: `badge ${c.type === "REMOVE_CONTENT" ? "bad" : "ok"}` }, changeLabel(c)), changeWhat(c), h("span", { class: "mono" }, c.creatorUid || "—")]),
        "No change recorded.",
      ),
    ),
    h("h3", null, `Log entries (${m.logCount})`),
    cut("logs", m.logCount, d.logs.length, true),
    h(
      "div",
      { id: "mission-logs" },
      table(
        ["Time", "By", "Entry", "Keywords"],
        d.logs.map((l) => [when(l.dtg), h("span", { class: "mono" }, l.creatorUid || "—"), h("div", { class: "log-text" }, l.content), l.keywords.join(", ") || "—"]),
        "No log entry.",
      ),
    ),
  ];
}

/** A relative time with the exact one as its tooltip. */
function when(iso) {
  return h("span", { title: iso }, ago(iso));
}

function fact(label, value) {
  return [h("dt", null, label), h("dd", null, value)];
}

const ROLES = { MISSION_OWNER: "owner", MISSION_SUBSCRIBER: "subscriber", MISSION_READONLY_SUBSCRIBER: "read only" };

function roleBadge(role) {
  return h("span", { class: `badge ${role === "MISSION_OWNER" ? "ok" : ""}`, title: role }, ROLES[role] || role);
}

const KINDS = { mission: "mission", file: "file", uid: "uid", log: "log entry", externalData: "external data" };

function changeLabel(c) {
  if (c.type === "CREATE_MISSION") return "created";
  return `${c.type === "REMOVE_CONTENT" ? "removed" : "added"} ${KINDS[c.kind] || c.kind}`;
}

function changeWhat(c) {
  switch (c.kind) {
    case "file":
      return [c.name, h("small", { class: "note" }, ` ${formatBytes(c.size)}`)];
    case "uid":
      return [c.callsign || "", c.callsign ? " " : "", h("span", { class: "mono" }, c.uid)];
    case "log":
      return h("span", { class: "log-text" }, c.text);
    case "externalData":
      return c.name || c.uid;
    default:
      return "—";
  }
}
