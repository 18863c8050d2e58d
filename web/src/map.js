// The Map page: the live picture. Connected clients and the latest event of
// every other uid in view come from GET /api/map (polled every second);
// active emergencies from GET /ManageEmergency/getEmergency and repeated
// geo objects from GET /ManageGeoObject/GetRepeatedMessages (every few
// seconds). Everything is drawn as 2525C symbols with callsign labels;
// items past their stale time are faded.
import * as L from "leaflet";
import { api } from "./api.js";
import { addBackground } from "./basemap.js";
import { detailsPopup, emergencyForm, geoObjectForm } from "./mapforms.js";
import { symbolFor } from "./symbols.js";
import { ago, every, formatLatLon, h, setChildren, showError } from "./ui.js";

const POLL_MS = 1000;
const SLOW_POLL_MS = 5000;

export function mountMap(root, params) {
  const mapEl = h("div", { class: "map", id: "map" });
  const hint = h("div", { class: "map-hint", hidden: true });
  const coords = h("div", { class: "map-coords" }, "—");
  const side = h("aside", { class: "map-side" });
  root.append(h("div", { class: "map-page" }, h("div", { class: "map-wrap" }, mapEl, hint, coords), side));

  const map = L.map(mapEl, { worldCopyJump: true, zoomControl: true, attributionControl: true, minZoom: 2 }).setView([20, 0], 2);
  map.attributionControl.setPrefix(false);
  L.control.scale({ imperial: false }).addTo(map);
  map.on("mousemove", (e) => (coords.textContent = formatLatLon(e.latlng.lat, e.latlng.lng)));

  const state = {
    entries: new Map(), // key -> {marker, sig, data}
    clients: [],
    items: [],
    emergencies: [],
    emergencySupport: true,
    repeated: new Map(), // uid -> CoT XML
    repeatSupport: true,
    show: { clients: true, items: true, emergencies: true, stale: true },
    fitted: false,
    meta: { basemap: false },
    focus: params.get("focus"),
    mode: null,
  };
  const layer = L.layerGroup().addTo(map);
  let removed = false; // the page went while a request was on its way: draw nothing

  const refresh = async () => {
    const b = map.getBounds();
    let west = b.getWest();
    let east = b.getEast();
    if (east - west >= 360) [west, east] = [-180, 180];
    const bbox = [west, Math.max(-90, b.getSouth()), east, Math.min(90, b.getNorth())].map((v) => v.toFixed(5)).join(",");
    const res = await api("GET", `api/map?bbox=${bbox}`);
    if (removed) return;
    state.clients = res.clients;
    state.items = res.items;
    draw();
  };
  const refreshSlow = async () => {
    if (state.emergencySupport) {
      try {
        const res = await api("GET", "ManageEmergency/getEmergency");
        state.emergencies = Array.isArray(res.json_list) ? res.json_list : [];
      } catch (e) {
        if (e.status === 404 || e.status === 405) state.emergencySupport = false;
        else throw e;
      }
    }
    if (state.repeatSupport) {
      try {
        const res = await api("GET", "ManageGeoObject/GetRepeatedMessages");
        state.repeated = new Map(Object.entries((res && res.messages) || {}));
      } catch (e) {
        if (e.status === 404 || e.status === 405) state.repeatSupport = false;
        else throw e;
      }
    }
    if (removed) return;
    draw();
  };

  function visibleEntries() {
    const now = Date.now();
    const out = [];
    const emergencyUIDs = new Set(state.emergencies.map((e) => e.uid));
    if (state.show.clients) {
      for (const c of state.clients) {
        if (c.lat === null || c.lon === null) continue;
        const stale = c.stale ? Date.parse(c.stale) < now : false;
        out.push({ key: `c:${c.uid}`, kind: "client", lat: c.lat, lon: c.lon, type: c.type || "a-f-G", label: c.callsign || c.uid, stale, data: c });
      }
    }
    for (const it of state.items) {
      const isEmergency = it.type.startsWith("b-a-");
      if (emergencyUIDs.has(it.uid)) continue; // drawn from the emergency list
      if (isEmergency ? !state.show.emergencies : !state.show.items) continue;
      const stale = it.deleted || Date.parse(it.stale) < now;
      out.push({ key: `i:${it.uid}`, kind: "item", lat: it.lat, lon: it.lon, type: it.type, label: it.callsign || it.uid, stale, data: it });
    }
    if (state.show.emergencies) {
      for (const e of state.emergencies) {
        const type = (emergencyCoT[e.type] || "b-a-o-tbl");
        out.push({ key: `e:${e.uid}`, kind: "emergency", lat: e.lat, lon: e.lon, type, label: `${e.name || e.uid} — ${e.type}`, stale: false, data: e });
      }
    }
    return state.show.stale ? out : out.filter((e) => !e.stale);
  }

  function draw() {
    const seen = new Set();
    for (const v of visibleEntries()) {
      seen.add(v.key);
      const sig = `${v.type}|${v.stale}|${v.label}`;
      let e = state.entries.get(v.key);
      if (!e) {
        const marker = L.marker([v.lat, v.lon], { icon: iconOf(v), title: v.label, riseOnHover: true, keyboard: true });
        marker.bindPopup(() => detailsPopup(state.entries.get(v.key).view, actions), { minWidth: 260, maxWidth: 360 });
        marker.addTo(layer);
        e = { marker, sig, view: v };
        state.entries.set(v.key, e);
      } else {
        if (e.sig !== sig) {
          e.marker.setIcon(iconOf(v));
          e.sig = sig;
        }
        const ll = e.marker.getLatLng();
        if (ll.lat !== v.lat || ll.lng !== v.lon) e.marker.setLatLng([v.lat, v.lon]);
        e.view = v;
      }
      e.marker.setZIndexOffset(v.kind === "emergency" ? 2000 : v.kind === "client" ? 1000 : 0);
    }
    for (const [key, e] of state.entries) {
      if (!seen.has(key)) {
        layer.removeLayer(e.marker);
        state.entries.delete(key);
      }
    }
    fitOnce();
    renderSide();
    scheduleDeclutter();
  }

  // Labels that would overlap a more important one are hidden (shown on
  // hover): emergencies first, then clients, then live items, then stale.
  let declutterFrame = 0;
  function scheduleDeclutter() {
    if (!declutterFrame) declutterFrame = requestAnimationFrame(declutter);
  }
  function declutter() {
    declutterFrame = 0;
    const rank = (v) => (v.kind === "emergency" ? 3 : v.kind === "client" ? 2 : 1) - (v.stale ? 1 : 0);
    const labels = [...state.entries.values()]
      .sort((a, b) => rank(b.view) - rank(a.view))
      .map((e) => e.marker.getElement() && e.marker.getElement().querySelector(".sym-label"))
      .filter(Boolean);
    labels.forEach((l) => l.classList.remove("crowded"));
    const boxes = labels.map((l) => l.getBoundingClientRect());
    const placed = [];
    labels.forEach((l, i) => {
      const r = boxes[i];
      if (r.width === 0) return;
      if (placed.some((p) => r.left < p.right && r.right > p.left && r.top < p.bottom && r.bottom > p.top)) l.classList.add("crowded");
      else placed.push(r);
    });
  }

  function fitOnce() {
    if (state.fitted) return;
    if (state.focus) {
      const e = state.entries.get(`c:${state.focus}`) || state.entries.get(`i:${state.focus}`) || state.entries.get(`e:${state.focus}`);
      if (e) {
        state.fitted = true;
        map.setView(e.marker.getLatLng(), 13);
        e.marker.openPopup();
      }
      return;
    }
    const pts = state.clients.filter((c) => c.lat !== null).map((c) => [c.lat, c.lon]);
    if (pts.length) {
      state.fitted = true;
      map.fitBounds(L.latLngBounds(pts).pad(0.3), { maxZoom: 13 });
    }
  }

  const actions = {
    cancelEmergency: async (uid) => {
      await api("DELETE", "ManageEmergency/deleteEmergency", { uid });
      map.closePopup();
      await refreshSlow();
      await refresh();
    },
    stopRepeating: async (uid) => {
      await api("DELETE", `ManageGeoObject/DeleteRepeatedMessage?ids=${encodeURIComponent(uid)}`);
      map.closePopup();
      await refreshSlow();
    },
    isRepeated: (uid) => state.repeated.has(uid),
    isEmergency: (uid) => state.emergencies.some((e) => e.uid === uid),
    eventOf: (uid) => api("GET", `api/map/event?uid=${encodeURIComponent(uid)}`),
  };

  // Placing a geo object or an emergency: one click on the map.
  function startPlacing(kind) {
    state.mode = kind;
    mapEl.classList.add("placing");
    hint.hidden = false;
    setChildren(hint, kind === "geo" ? "Click the map where the object is" : "Click the map where the emergency is", h("kbd", null, "Esc"), " cancels");
  }
  function stopPlacing() {
    state.mode = null;
    mapEl.classList.remove("placing");
    hint.hidden = true;
  }
  map.on("click", (e) => {
    if (!state.mode) return;
    const kind = state.mode;
    stopPlacing();
    const done = async () => {
      await refreshSlow();
      await refresh();
    };
    if (kind === "geo") geoObjectForm(e.latlng, done);
    else emergencyForm(e.latlng, done);
  });
  const onKey = (e) => {
    if (e.key === "Escape" && state.mode) stopPlacing();
  };
  document.addEventListener("keydown", onKey);

  function renderSide() {
    const count = (k) => [...state.entries.values()].filter((e) => e.view.kind === k).length;
    const toggle = (key, text) =>
      h(
        "label",
        { class: "check" },
        h("input", {
          type: "checkbox",
          checked: state.show[key],
          onchange: (ev) => {
            state.show[key] = ev.target.checked;
            draw();
          },
        }),
        text,
      );
    const clientRows = state.clients.map((c) =>
      h(
        "li",
        null,
        h(
          "button",
          {
            type: "button",
            class: "link",
            onclick: () => {
              const e = state.entries.get(`c:${c.uid}`);
              if (e) {
                map.setView(e.marker.getLatLng(), Math.max(map.getZoom(), 13));
                e.marker.openPopup();
              }
            },
          },
          c.callsign || c.uid,
        ),
        h("small", null, c.lat === null ? "no position yet" : ago(c.lastSeen)),
      ),
    );
    const repeatedRows = [...state.repeated.entries()].map(([uid, xml]) =>
      h(
        "li",
        null,
        h("span", { title: uid }, repeatedName(uid, xml)),
        h("button", { type: "button", class: "small", onclick: () => actions.stopRepeating(uid).catch((e) => showError("Stop repeating", e)) }, "Stop"),
      ),
    );
    setChildren(
      side,
      h("h2", null, "Picture"),
      h(
        "p",
        { class: "counts" },
        `${count("client")} clients · ${count("item")} objects · ${count("emergency")} emergencies`,
      ),
      h("div", { class: "toggles" }, toggle("clients", "Clients"), toggle("items", "Markers and objects"), toggle("emergencies", "Emergencies"), toggle("stale", "Stale items (faded)")),
      h(
        "div",
        { class: "tools" },
        h("button", { type: "button", class: "primary", onclick: () => startPlacing("geo"), id: "place-object" }, "Place object"),
        h("button", { type: "button", class: "danger", onclick: () => startPlacing("emergency"), id: "raise-emergency" }, "Raise emergency"),
      ),
      state.emergencySupport ? null : h("p", { class: "note" }, "This server has no emergency routes."),
      h("h3", null, "Connected clients"),
      clientRows.length ? h("ul", { class: "plain", id: "client-list" }, clientRows) : h("p", { class: "empty" }, "No client connected."),
      state.repeatSupport ? h("h3", null, "Repeated objects") : null,
      state.repeatSupport ? (repeatedRows.length ? h("ul", { class: "plain" }, repeatedRows) : h("p", { class: "empty" }, "None.")) : null,
      h("h3", null, "Basemap"),
      state.meta.basemap
        ? h(
            "p",
            null,
            `${state.meta.name || "MBTiles"} (${state.meta.format}, zoom ${state.meta.minZoom}–${state.meta.maxZoom}). `,
            h("a", { href: "tiles/mapsource.xml", download: "outpost-basemap.xml" }, "ATAK map source"),
          )
        : h("p", { class: "note" }, "No basemap loaded: coastlines and grid only. Upload an MBTiles file as a data package with the keyword basemap."),
    );
  }

  addBackground(map).then((meta) => {
    if (removed) return;
    state.meta = meta;
    if (meta.basemap && meta.bounds && !state.fitted && !state.focus) {
      map.fitBounds([[meta.bounds[1], meta.bounds[0]], [meta.bounds[3], meta.bounds[2]]]);
    }
    renderSide();
  });
  renderSide();
  const stopFast = every(POLL_MS, refresh);
  const stopSlow = every(SLOW_POLL_MS, refreshSlow);
  map.on("moveend", () => refresh().catch(() => {}));
  map.on("zoomend", scheduleDeclutter);

  return () => {
    removed = true;
    stopFast();
    stopSlow();
    cancelAnimationFrame(declutterFrame);
    document.removeEventListener("keydown", onKey);
    map.remove();
  };
}

// getEmergency's type names (api.md §2.10) to their CoT types.
const emergencyCoT = { "911 Alert": "b-a-o-tbl", "Ring The Bell": "b-a-o-pan", "Geo-fence Breached": "b-a-g", "In Contact": "b-a-o-opn" };

function iconOf(v) {
  const s = symbolFor(v.type);
  const img = h("img", { src: s.url, width: s.width, height: s.height, alt: "", draggable: "false" });
  const el = h("div", { class: `sym ${s.kind} ${v.kind}${v.stale ? " stale" : ""}` }, img, h("span", { class: "sym-label" }, v.label));
  return L.divIcon({ className: "sym-icon", html: el, iconSize: [s.width, s.height], iconAnchor: [s.anchorX, s.anchorY], popupAnchor: [0, -s.anchorY] });
}

// The callsign of a repeated object's CoT (GetRepeatedMessages answers
// the XML), or its uid. DOMParser builds an inert document: nothing runs.
function repeatedName(uid, xml) {
  try {
    const doc = new DOMParser().parseFromString(String(xml), "application/xml");
    const c = doc.querySelector("contact");
    const name = c && c.getAttribute("callsign");
    if (name) return name;
  } catch {
    /* not XML */
  }
  return uid.length > 24 ? `${uid.slice(0, 24)}…` : uid;
}
