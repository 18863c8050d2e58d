// Map symbols: MIL-STD-2525C symbols (milsymbol) for CoT atoms, and plain
// icons for emergencies and map points. A CoT atom type a-<affiliation>-
// <dimension>-<function...> maps onto a 2525C letter code:
//   S <affiliation> <dimension> P <function, 6 characters> -----
// The function is the CoT type's remaining letters; when milsymbol has no
// icon for them, shorter prefixes are tried (a-f-G-U-C-I-d falls back to
// infantry, a-f-G-U-C-I), down to the bare frame.
import { ms } from "milsymbol-core";
import { air, equipment, ground, installations, sea, sof, space, subsurface, emergencymanagementsymbols } from "milsymbol-letters";

ms.addIcons([space, air, ground, equipment, installations, sea, subsurface, sof, emergencymanagementsymbols]);

// CoT affiliation letter -> 2525C standard identity.
const AFFILIATION = { p: "P", u: "U", a: "A", f: "F", n: "N", s: "S", h: "H", j: "J", k: "K", o: "U", x: "U", ".": "U" };
// CoT battle dimension -> 2525C battle dimension (X: "other", drawn unknown).
const DIMENSION = { P: "P", A: "A", G: "G", S: "S", U: "U", F: "F", X: "Z", Z: "Z" };

/** The 2525C letter SIDC for a CoT atom type, or null for other types. */
export function sidcFor(type) {
  const p = String(type || "").split("-");
  if (p[0] !== "a" || p.length < 2) return null;
  const aff = AFFILIATION[p[1].toLowerCase()] || "U";
  const dim = DIMENSION[(p[2] || "Z").toUpperCase()] || "Z";
  const fn = p.slice(3).join("").toUpperCase().replace(/[^A-Z]/g, "").slice(0, 6);
  for (let n = fn.length; n >= 0; n--) {
    const sidc = `S${aff}${dim}P${fn.slice(0, n).padEnd(6, "-")}-----`;
    if (n === 0 || new ms.Symbol(sidc).isValid()) return sidc;
  }
  return null;
}

const cache = new Map();

/**
 * The picture of a map item: {url, width, height, anchorX, anchorY}.
 * kind is "atom", "emergency", "point" or "report".
 */
export function symbolFor(type) {
  let s = cache.get(type);
  if (!s) {
    s = draw(type);
    if (cache.size > 500) cache.clear();
    cache.set(type, s);
  }
  return s;
}

function draw(type) {
  const sidc = sidcFor(type);
  if (sidc) {
    const sym = new ms.Symbol(sidc, { size: 24, outlineWidth: 3, outlineColor: "rgba(10,16,22,0.85)" });
    const size = sym.getSize();
    const anchor = sym.getAnchor();
    return {
      url: sym.toDataURL(),
      width: Math.round(size.width),
      height: Math.round(size.height),
      anchorX: Math.round(anchor.x),
      anchorY: Math.round(anchor.y),
      kind: "atom",
      sidc,
    };
  }
  if (type.startsWith("b-a-")) return icon(emergencySVG, 34, "emergency");
  if (type.startsWith("b-r-f-")) return icon(reportSVG, 28, "report");
  return icon(pointSVG, 18, "point");
}

function icon(svg, size, kind) {
  return {
    url: `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`,
    width: size,
    height: size,
    anchorX: size / 2,
    anchorY: size / 2,
    kind,
  };
}

const emergencySVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 34 34"><circle cx="17" cy="17" r="15" fill="#d7263d" stroke="#fff" stroke-width="2.5"/>' +
  '<rect x="15" y="7.5" width="4" height="12" rx="1.5" fill="#fff"/><circle cx="17" cy="24.5" r="2.4" fill="#fff"/></svg>';
const reportSVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 28 28"><rect x="2" y="2" width="24" height="24" rx="4" fill="#fff" stroke="#d7263d" stroke-width="2.5"/>' +
  '<path d="M11 6h6v5h5v6h-5v5h-6v-5H6v-6h5z" fill="#d7263d"/></svg>';
const pointSVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 18 18"><circle cx="9" cy="9" r="6" fill="#f2c14e" stroke="#1b1b1b" stroke-width="2"/></svg>';

/** Readable name of an affiliation, from the CoT type. */
export function affiliationName(type) {
  const a = String(type || "").split("-")[1] || "";
  return (
    { f: "friend", a: "assumed friend", h: "hostile", s: "suspect", n: "neutral", u: "unknown", p: "pending", j: "joker", k: "faker" }[
      a.toLowerCase()
    ] || ""
  );
}

// Emergency CoT types (api.md §2.10).
export const EMERGENCY_TYPES = [
  ["911 Alert", "b-a-o-tbl"],
  ["Ring The Bell", "b-a-o-pan"],
  ["Geo-fence Breached", "b-a-g"],
  ["In Contact", "b-a-o-opn"],
];

// Geo object names the management API accepts (api.md §2.5), with the
// CoT type a friendly one becomes (the "." is the attitude).
export const GEO_OBJECTS = [
  ["Ground", "a-.-G"],
  ["Sniper", "a-.-G-U-C-I-d"],
  ["Medic", "a-.-G-U-i-m-etf"],
  ["Recon", "a-.-G-U-C-R"],
  ["LMG", "a-.-G-E-W-R"],
  ["Grenadier", "a-.-G-E-W-Z"],
  ["anti Tank", "a-.-G-U-C-A-A"],
  ["AA", "a-.-G-U-C-D"],
  ["Engineer", "a-.-G-U-C-E"],
  ["Mortar", "a-.-G-E-W-O"],
  ["Vehicle", "a-.-G-E-V-C"],
  ["Ambulance", "a-.-G-E-V-m"],
  ["Hospital", "a-.-G-I-X-H"],
  ["Police Station", "a-.-G-I-i-l"],
  ["Emergency Station", "a-.-G-I-i-e"],
  ["SAR", "a-.-A-M-F-Q-H"],
  ["Medevac", "a-.-G-U-C-V-R-E"],
  ["Incident", "a-.-X-i-o"],
  ["fire", "a-.-X-i-f"],
  ["earthquake", "a-.-X-i-g-e"],
  ["avalanche", "a-.-X-i-g-a"],
  ["vehicle accident", "a-.-X-i-t-v-a"],
];

export const ATTITUDES = ["friendly", "hostile", "neutral", "unknown"];
