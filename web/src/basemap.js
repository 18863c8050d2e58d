// The map's background, all from this server: the MBTiles basemap's tiles
// when one is loaded (/tiles/metadata.json says so), over the world's
// coastlines (Natural Earth 1:110m land, public domain, bundled) and a
// graticule whose spacing follows the zoom. Without a basemap the
// coastlines and the graticule are the whole background.
import * as L from "leaflet";
import { feature } from "topojson-client";
import land110m from "world-atlas/land-110m.json";

/** Adds the background layers to map; resolves to the tile metadata. */
export async function addBackground(map) {
  map.createPane("land").style.zIndex = "150"; // under the tiles (200)
  map.createPane("graticule").style.zIndex = "250";
  map.getPane("graticule").style.pointerEvents = "none";

  const land = feature(land110m, land110m.objects.land);
  L.geoJSON(land, {
    pane: "land",
    interactive: false,
    style: { color: "#8aa39b", weight: 1, fillColor: "#2e3d35", fillOpacity: 1 },
  }).addTo(map);

  const grat = L.layerGroup([], { pane: "graticule" }).addTo(map);
  const redraw = () => drawGraticule(map, grat);
  map.on("moveend zoomend", redraw);
  redraw();

  // The page may go (map.remove()) while the metadata is on its way.
  let unloaded = false;
  map.once("unload", () => (unloaded = true));
  let meta = { basemap: false };
  try {
    const res = await fetch("tiles/metadata.json", { cache: "no-store" });
    if (res.ok) meta = await res.json();
  } catch {
    /* no basemap */
  }
  if (meta.basemap && !unloaded) {
    const opts = {
      minZoom: 0,
      maxNativeZoom: meta.maxZoom,
      maxZoom: Math.max(meta.maxZoom + 3, 18),
      attribution: escapeHTML(meta.attribution || meta.name || "basemap"),
    };
    if (meta.bounds) opts.bounds = L.latLngBounds([meta.bounds[1], meta.bounds[0]], [meta.bounds[3], meta.bounds[2]]);
    L.tileLayer("tiles/{z}/{x}/{y}", opts).addTo(map);
  }
  return meta;
}

// Leaflet's attribution is HTML: the metadata is text.
function escapeHTML(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

const STEPS = [30, 10, 5, 2, 1, 0.5, 0.25, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001];

function drawGraticule(map, group) {
  group.clearLayers();
  const b = map.getBounds();
  const size = map.getSize();
  const degPerPx = (b.getEast() - b.getWest()) / Math.max(size.x, 1);
  // About one line per 120 pixels.
  const step = STEPS.find((s, i) => i === STEPS.length - 1 || STEPS[i + 1] < degPerPx * 120) || 30;
  const south = Math.max(-85, Math.floor(b.getSouth() / step) * step);
  const north = Math.min(85, Math.ceil(b.getNorth() / step) * step);
  const west = Math.floor(b.getWest() / step) * step;
  const east = Math.ceil(b.getEast() / step) * step;
  const line = { pane: "graticule", color: "#9fb7c9", weight: 1, opacity: 0.35, interactive: false };
  const digits = step >= 1 ? 0 : Math.min(3, Math.ceil(-Math.log10(step)));
  // Latitudes are labelled at the right edge, longitudes at the top; none
  // under the zoom buttons (top left).
  let n = 0;
  for (let lat = south; lat <= north + 1e-9 && n < 200; lat += step, n++) {
    group.addLayer(L.polyline([[lat, west], [lat, east]], line));
    const p = map.latLngToContainerPoint([lat, b.getEast()]);
    if (p.y > 24 && p.y < size.y - 8) group.addLayer(label([lat, b.getEast()], `${Math.abs(lat).toFixed(digits)}°${lat >= 0 ? "N" : "S"}`, "lat"));
  }
  for (let lon = west; lon <= east + 1e-9 && n < 400; lon += step, n++) {
    group.addLayer(L.polyline([[south, lon], [north, lon]], line));
    const wrapped = ((((lon + 180) % 360) + 360) % 360) - 180;
    const p = map.latLngToContainerPoint([b.getNorth(), lon]);
    if (p.x > 60 && p.x < size.x - 50) group.addLayer(label([b.getNorth(), lon], `${Math.abs(wrapped).toFixed(digits)}°${wrapped >= 0 ? "E" : "W"}`, "lon"));
  }
}

function label(latlng, text, kind) {
  const el = document.createElement("span");
  el.textContent = text;
  return L.marker(latlng, {
    pane: "graticule",
    interactive: false,
    keyboard: false,
    icon: L.divIcon({ className: `grat-label grat-${kind}`, html: el, iconSize: null }),
  });
}
