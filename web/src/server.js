// The Server page: version and uptime, the listeners and whether they
// accept connections, machine health and relay throughput as charts (GET
// /api/server, every 5 seconds), and the log tail (GET /api/logs, every 2
// seconds).
import { api } from "./api.js";
import { every, formatDuration, h, section, setChildren, table } from "./ui.js";

const SAMPLES = 72; // 6 minutes at one sample per 5 s
const LOG_LINES = 300;

export function mountServer(root) {
  const info = h("div");
  const charts = h("div", { class: "charts" });
  const logBox = h("div", { class: "logs", id: "log-tail" });
  root.append(section("Server", null, info), section("Health", null, charts), section("Log", null, logBox));

  const series = { CPU: [], Memory: [], Disk: [], "CoT events/s": [], "CoT connections": [] };
  let lastEvents = null;
  const logs = [];
  const seen = new Set();
  let since = "";

  const stopInfo = every(5000, async () => {
    const s = await api("GET", "api/server");
    push(series.CPU, s.health.CPU);
    push(series.Memory, s.health.memory);
    push(series.Disk, s.health.disk);
    const now = Date.now();
    if (lastEvents) push(series["CoT events/s"], Math.max(0, (s.relay.published - lastEvents.total) / ((now - lastEvents.at) / 1000)));
    lastEvents = { total: s.relay.published, at: now };
    push(series["CoT connections"], s.relay.sessions);
    setChildren(
      info,
      h(
        "dl",
        { class: "facts" },
        h("dt", null, "Version"),
        h("dd", { id: "server-version" }, s.version),
        h("dt", null, "Up"),
        h("dd", null, formatDuration(s.uptimeSeconds)),
        h("dt", null, "Public host"),
        h("dd", null, s.publicHost || "—"),
        h("dt", null, "Connected clients"),
        h("dd", null, String(s.clients)),
      ),
      table(
        ["Listener", "Port", "Configured", "Accepting"],
        s.services.map((x) => [
          x.name.replace(/_/g, " "),
          x.enabled ? String(x.port) : "—",
          x.enabled ? "on" : "off",
          h("span", { class: `badge ${x.status === "on" ? "ok" : x.enabled ? "bad" : "off"}` }, x.enabled ? x.status : "—"),
        ]),
        "No listener.",
      ),
    );
    setChildren(
      charts,
      chart("CPU", series.CPU, "%", 100),
      chart("Memory", series.Memory, "%", 100),
      chart("Disk", series.Disk, "%", 100),
      chart("CoT events/s", series["CoT events/s"], "/s"),
      chart("CoT connections", series["CoT connections"], ""),
    );
  });

  const stopLogs = every(2000, async () => {
    const res = await api("GET", `api/logs${since ? `?since=${encodeURIComponent(since)}` : ""}`);
    const fresh = res.log_data.filter((l) => {
      const key = `${l.time}|${l.file}|${l.message}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    if (!fresh.length) return;
    since = res.log_data[0].time; // newest first
    logs.unshift(...fresh);
    if (logs.length > LOG_LINES) logs.length = LOG_LINES;
    if (seen.size > LOG_LINES * 4) {
      seen.clear();
      logs.forEach((l) => seen.add(`${l.time}|${l.file}|${l.message}`));
    }
    setChildren(
      logBox,
      logs.map((l) =>
        h(
          "div",
          { class: `log ${l.type.toLowerCase()}` },
          h("span", { class: "t" }, l.time.slice(11, 23)),
          h("span", { class: "lvl" }, l.type),
          h("span", { class: "src" }, l.file),
          h("span", { class: "msg" }, l.message),
        ),
      ),
    );
  });

  return () => {
    stopInfo();
    stopLogs();
  };
}

function push(arr, v) {
  arr.push(v === null || v === undefined ? null : Number(v));
  if (arr.length > SAMPLES) arr.shift();
}

const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attrs) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

/** A line chart of the samples; max fixes the scale (else the largest). */
function chart(title, values, unit, max) {
  const W = 300;
  const H = 80;
  const known = values.filter((v) => v !== null);
  const top = max || Math.max(1, ...known) * 1.15;
  const g = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart-svg", role: "img", "aria-label": title });
  for (const f of [0.25, 0.5, 0.75]) g.append(svg("line", { x1: 0, x2: W, y1: H * f, y2: H * f, class: "chart-grid" }));
  const pts = [];
  const offset = SAMPLES - values.length; // the newest sample at the right edge
  values.forEach((v, i) => {
    if (v === null) return;
    const x = ((offset + i) / (SAMPLES - 1)) * W;
    const y = H - (Math.min(v, top) / top) * (H - 4) - 2;
    pts.push(`${x.toFixed(1)},${y.toFixed(1)}`);
  });
  if (pts.length > 1) g.append(svg("polyline", { points: pts.join(" "), class: "chart-line" }));
  else if (pts.length === 1) {
    const [x, y] = pts[0].split(",");
    g.append(svg("circle", { cx: x, cy: y, r: 2.5, class: "chart-dot" }));
  }
  const last = known.length ? known[known.length - 1] : null;
  const shown = last === null ? "—" : `${last >= 10 || Number.isInteger(last) ? Math.round(last) : last.toFixed(1)}${unit}`;
  return h("figure", { class: "chart" }, h("figcaption", null, h("span", null, title), h("strong", null, shown)), g);
}
